// Package restauranttest starts a real restaurant configuration server for
// tests: a fresh SQLite database, the full HTTP stack on an httptest server,
// response validation on (any response that breaks the spec fails the test),
// two restaurants and an API client granted the first.
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
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/stack"
)

// Options tunes the server under test; the zero value is the defaults.
type Options struct {
	// Settings are the server's knobs (0: their defaults).
	restaurant.Settings
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

// Start runs a restaurant server until the test ends.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	env, stop, err := open(t.TempDir(), stacktest.OpenDB(t), opts, func(r *http.Request, status int, err error) {
		t.Errorf("restaurant response %d to %s %s breaks the spec: %v", status, r.Method, r.URL, err)
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	return env
}

// Open runs a restaurant server with its database in dir until stop is
// called; onViolation hears of every response that breaks the spec. Examples
// use it where there is no *testing.T.
func Open(dir string, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	return open(dir, stack.OpenFromTemplates(dir, stack.TempRoot()), opts, onViolation)
}

func open(dir string, openDB stack.OpenDBFunc, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	ctx := context.Background()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// The restaurant server of the same assembly as `apistack serve` and
	// the test kit (servers/stack), its database in dir.
	srv, db, err := stack.OpenServer(ctx, stack.Config{
		DataDir: dir, OpenDB: openDB, Clock: opts.Clock, Logger: logger, ValidateResponses: !opts.SkipResponseValidation,
		OnResponseViolation: stacktest.PerAPI(onViolation),
	}, restaurant.API, opts.Settings)
	if err != nil {
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
