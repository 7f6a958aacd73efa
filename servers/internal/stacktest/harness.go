package stacktest

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/stack"
)

// Harness is how a per-API harness (storagetest, restauranttest) runs its
// API's server.
type Harness struct {
	// Clock drives the server's time; nil means the system clock.
	Clock clock.Clock
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// SkipResponseValidation turns response validation off (benchmarks).
	SkipResponseValidation bool
}

// Served is one API's server running alone on an httptest server.
type Served[Srv any] struct {
	// Server is the API's server, for operator calls.
	Server Srv
	// DB is its database, for tests that make it fail.
	DB *sql.DB
	// URL is the httptest server's base URL.
	URL string
}

// Start runs api's server for t until the test ends, on a database of the
// run's backend (OpenDB) with settings; seed fills it before it serves. A
// response that breaks the spec fails t.
func Start[S any, Srv descriptor.Server, C any](t testing.TB, api descriptor.API[S, Srv, C], settings S, h Harness, seed func(Srv) error) Served[Srv] {
	t.Helper()
	served, stop, err := Serve(t.TempDir(), OpenDB(t), api, settings, h, seed, func(r *http.Request, status int, err error) {
		t.Errorf("%s response %d to %s %s breaks the spec: %v", api.Name, status, r.Method, r.URL, err)
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	return served
}

// Serve runs api's server, built as the stack builds it (stack.OpenServer)
// with its database (and master key) in dir opened by openDB (nil: copies of
// SQLite templates), until stop is called; seed fills it before it serves,
// and onViolation hears of every response that breaks the spec. Examples use
// it where there is no *testing.T.
func Serve[S any, Srv descriptor.Server, C any](dir string, openDB stack.OpenDBFunc, api descriptor.API[S, Srv, C], settings S, h Harness,
	seed func(Srv) error, onViolation func(r *http.Request, status int, err error)) (served Served[Srv], stop func(), err error) {
	if openDB == nil {
		openDB = stack.OpenFromTemplates(dir, stack.TempRoot())
	}
	logger := h.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv, db, err := stack.OpenServer(context.Background(), stack.Config{
		DataDir: dir, OpenDB: openDB, Clock: h.Clock, Logger: logger, ValidateResponses: !h.SkipResponseValidation,
		OnResponseViolation: PerAPI(onViolation),
	}, api, settings)
	if err != nil {
		return served, nil, err
	}
	handler, err := srv.Handler()
	if err == nil && seed != nil {
		err = seed(srv)
	}
	if err != nil {
		return served, nil, errors.Join(err, db.Close())
	}
	hs := httptest.NewServer(handler)
	return Served[Srv]{Server: srv, DB: db, URL: hs.URL}, func() { hs.Close(); _ = db.Close() }, nil
}
