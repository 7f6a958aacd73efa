// Package stacktest holds what the servers' tests share: it opens the
// databases of a test's stack (servers/stack) on the test run's backend, for
// the per-API test harnesses that start their server through the stack, and
// holds a test's exchanges to an API's spec.
package stacktest

import (
	"context"
	"database/sql"
	"net/http"
	"testing"

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
