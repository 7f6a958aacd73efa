// Package stacktest holds what the servers' tests share: it opens the
// databases of a test's stack (servers/stack) on the test run's backend, for
// the per-API test harnesses that start their server through the stack, and
// holds a test's exchanges to an API's spec.
package stacktest

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/stack"
)

// OpenDB opens each API's database for t on the run's backend (testdb):
// copies of migrated SQLite templates, or fresh PostgreSQL schemas with
// APISTACK_TEST_BACKEND=postgres, each dropped when t ends.
func OpenDB(t testing.TB) stack.OpenDBFunc {
	if testdb.Current() == testdb.SQLite {
		return stack.OpenFromTemplates(t.TempDir(), stack.TempRoot())
	}
	open := testdb.Opener(t)
	return func(ctx context.Context, m stack.Migrations) (*sql.DB, error) { return open(ctx, testdb.Migrations(m)) }
}

// PerAPI adapts a harness's violation hook to the stack's, which names the
// API; nil stays nil (violations are logged).
func PerAPI(onViolation func(r *http.Request, status int, err error)) func(string, *http.Request, int, error) {
	if onViolation == nil {
		return nil
	}
	return func(_ string, r *http.Request, status int, err error) { onViolation(r, status, err) }
}

// OpenServed opens a stack with cfg, closed when t ends, serves each of its
// APIs' handlers on a loopback port until t ends and tells the stack its
// URLs; it returns the stack, and its handlers and URLs by API name.
func OpenServed(t testing.TB, cfg stack.Config) (*stack.Stack, map[string]http.Handler, map[string]string) {
	t.Helper()
	st, err := stack.Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	handlers, err := st.Handlers()
	require.NoError(t, err)
	urls := map[string]string{}
	for _, api := range stack.APIs {
		hs := httptest.NewServer(handlers[api])
		t.Cleanup(hs.Close)
		urls[api] = hs.URL
	}
	require.NoError(t, st.SetURLs(urls))
	return st, handlers, urls
}
