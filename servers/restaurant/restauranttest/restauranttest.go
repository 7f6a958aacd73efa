// Package restauranttest starts a real restaurant configuration server for
// tests: a fresh database (SQLite, or PostgreSQL when the test run is on it),
// the full HTTP stack on an httptest server, response validation on (any
// response that breaks the spec fails the test), two restaurants and an API
// client granted the first.
package restauranttest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/restaurant"
)

// Options tunes the server under test; the zero value is the defaults.
type Options struct {
	TokenTTL      time.Duration
	RatePerSecond int
	RatePerWindow int
	// Clock drives the server's time; nil means the system clock.
	Clock clock.Clock
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// SkipResponseValidation turns response validation off (benchmarks).
	SkipResponseValidation bool
}

// Env is a running restaurant server.
type Env struct {
	// URL is the server's base URL.
	URL string
	// Server is the restaurant server, for operator calls (imports, archive).
	Server *restaurant.Server
	// Restaurant is granted to the API client; Other is not.
	Restaurant, Other string
	// ClientID and ClientSecret are the API client's credentials.
	ClientID, ClientSecret string
	// DB is the server's database, for tests that make it fail.
	DB *sql.DB
}

// Start runs a restaurant server until the test ends, on a fresh database
// of the test run's backend (testdb: SQLite, or PostgreSQL with
// APISTACK_TEST_BACKEND=postgres).
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	db := testdb.Open(t, testdb.Migrations{Schema: "restaurant", SQLite: restaurant.Migrations(), Postgres: restaurant.PostgresMigrations()})
	env, stop, err := run(db, opts, func(r *http.Request, status int, err error) {
		t.Errorf("restaurant response %d to %s %s breaks the spec: %v", status, r.Method, r.URL, err)
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	return env
}

// Open runs a restaurant server with its SQLite database in dir until stop
// is called; onViolation hears of every response that breaks the spec.
// Examples use it where there is no *testing.T.
func Open(dir string, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	db, err := sqlitedb.Open(context.Background(), filepath.Join(dir, "restaurant.db"), restaurant.Migrations())
	if err != nil {
		return nil, nil, err
	}
	return run(db, opts, onViolation)
}

// run starts the server on db, which it closes when stop is called or
// starting fails.
func run(db *sql.DB, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	ctx := context.Background()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := restaurant.New(ctx, restaurant.Config{
		DB: db, TokenTTL: opts.TokenTTL, RatePerSecond: opts.RatePerSecond, RatePerWindow: opts.RatePerWindow,
		Clock: opts.Clock, Logger: logger,
		ValidateResponses: !opts.SkipResponseValidation, OnResponseViolation: onViolation,
	})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	h, err := srv.Handler()
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	a, errA := srv.CreateRestaurant(ctx, "", "Test Bistro")
	b, errB := srv.CreateRestaurant(ctx, "", "Other Bistro")
	if errA != nil || errB != nil {
		db.Close()
		return nil, nil, fmt.Errorf("restauranttest: create restaurants: %w, %w", errA, errB)
	}
	creds, err := srv.CreateClient(ctx, "test client", []string{a.GUID})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	hs := httptest.NewServer(h)
	env = &Env{URL: hs.URL, Server: srv, Restaurant: a.GUID, Other: b.GUID, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret, DB: db}
	return env, func() { hs.Close(); db.Close() }, nil
}

// ImportDemo imports a demo configuration of menuItems menu items into the
// granted restaurant and returns it.
func (e *Env) ImportDemo(t testing.TB, menuItems int) *restaurant.Document {
	t.Helper()
	doc, err := e.ImportDemoErr(menuItems)
	require.NoError(t, err)
	return doc
}

// ImportDemoErr is ImportDemo for callers without a testing.TB (examples).
func (e *Env) ImportDemoErr(menuItems int) (*restaurant.Document, error) {
	doc := restaurant.Demo(restaurant.DemoOptions{MenuItems: menuItems, Seed: 1})
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if _, err := e.Server.Import(context.Background(), e.Restaurant, data); err != nil {
		return nil, err
	}
	return doc, nil
}
