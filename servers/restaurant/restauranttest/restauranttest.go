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
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/restaurant"
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
	// Server is the restaurant server.
	Server *restaurant.Server
	// Operator is the server's operator calls (imports, archive).
	Operator *restaurant.Operator
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
	env := &Env{}
	env.set(stacktest.Start(t, restaurant.API, opts.Settings, opts.harness(), env.seed))
	return env
}

// Open runs a restaurant server with its database in dir until stop is
// called; onViolation hears of every response that breaks the spec. Examples
// use it where there is no *testing.T.
func Open(dir string, opts Options, onViolation func(r *http.Request, status int, err error)) (*Env, func(), error) {
	env := &Env{}
	served, stop, err := stacktest.Serve(dir, nil, restaurant.API, opts.Settings, opts.harness(), env.seed, onViolation)
	env.set(served)
	return env, stop, err
}

func (o Options) harness() stacktest.Harness {
	return stacktest.Harness{Clock: o.Clock, Logger: o.Logger, SkipResponseValidation: o.SkipResponseValidation}
}

func (e *Env) set(s stacktest.Served[*restaurant.Server]) {
	e.URL, e.Server, e.Operator, e.DB = s.URL, s.Server, s.Server.Operator(), s.DB
}

// seed creates the two restaurants and the API client granted the first.
func (e *Env) seed(s *restaurant.Server) error {
	ctx, srv := context.Background(), s.Operator()
	a, errA := srv.CreateRestaurant(ctx, "", "Test Bistro")
	b, errB := srv.CreateRestaurant(ctx, "", "Other Bistro")
	if errA != nil || errB != nil {
		return fmt.Errorf("restauranttest: create restaurants: %w, %w", errA, errB)
	}
	creds, err := srv.CreateClient(ctx, "test client", []string{a.GUID})
	e.Restaurant, e.Other, e.ClientID, e.ClientSecret = a.GUID, b.GUID, creds.ClientID, creds.ClientSecret
	return err
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
	if _, err := e.Operator.Import(context.Background(), e.Restaurant, data); err != nil {
		return nil, err
	}
	return doc, nil
}
