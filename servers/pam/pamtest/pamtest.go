// Package pamtest starts a real PAM server for tests: a fresh database on
// the test run's backend (SQLite, or PostgreSQL with
// APISTACK_TEST_BACKEND=postgres: see testdb), the full HTTP stack on an httptest server, response validation on
// (any response that breaks the spec fails the test), and a record of every
// request it received.
package pamtest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/validation"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/stack"
)

// Options tunes the server under test; the zero value is the defaults.
type Options struct {
	// Settings are the server's knobs (0: their defaults).
	pam.Settings
	// Clock drives the server's time; nil means the system clock.
	Clock clock.Clock
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// NoValidation turns request and response validation off (benchmarks
	// comparing the cost of validation).
	NoValidation bool
	// ResponseChecks checks responses in the background, as `apistack serve
	// --validate-responses` does (benchmarks); nil checks each response before
	// sending it, failing the test on a violation before it sees the answer.
	ResponseChecks *validation.Background
}

// Request is one request the server received, with its answer.
type Request struct {
	Method string
	Path   string
	// At is when the request arrived.
	At time.Time
	// Status is the answer's status.
	Status int
	// RetryAt is the answer's X-RateLimit-Retry-At (Unix seconds), 0 when absent.
	RetryAt int64
}

// statusWriter remembers the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Env is a running PAM server.
type Env struct {
	// URL is the server's base URL.
	URL string
	// Server is the PAM server.
	Server *pam.Server
	// Operator is the server's operator calls (teams, service users).
	Operator *pam.Operator
	// Handler is the server's HTTP handler, for tests that call it directly.
	Handler http.Handler
	// DB is the server's database, for tests that must corrupt it.
	DB *sql.DB

	mu       sync.Mutex
	requests []Request
}

// Migrations are the PAM migrations of both backends, for testdb.
var Migrations = testdb.Migrations(pam.API.Migrations())

// Start runs a PAM server until the test ends, on a fresh database of the
// test run's backend.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	return StartOn(t, testdb.Open(t, Migrations), opts)
}

// StartOn runs a PAM server on db (migrated with Migrations) until the test
// ends: several servers on one PostgreSQL database are replicas of one
// service.
func StartOn(t testing.TB, db *sql.DB, opts Options) *Env {
	t.Helper()
	env, stop, err := OpenDB(db, opts, func(r *http.Request, status int, err error) {
		t.Errorf("PAM response %d to %s %s breaks the spec: %v", status, r.Method, r.URL, err)
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	return env
}

// Open runs a PAM server with its SQLite database in dir until stop is
// called; onViolation hears of every response that breaks the spec. Examples
// use it where there is no *testing.T (and so no testdb).
func Open(dir string, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	db, err := sqlitedb.Open(context.Background(), filepath.Join(dir, "pam.db"), pam.API.Migrations().SQLite)
	if err != nil {
		return nil, nil, err
	}
	return OpenDB(db, opts, onViolation)
}

// OpenDB runs a PAM server on db (migrated with Migrations) until stop is
// called, which closes db; onViolation hears of every response that breaks
// the spec. Unlike StartOn it may be called from any goroutine: the replica
// tests start several servers on one database at once.
func OpenDB(db *sql.DB, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	ctx := context.Background()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// The PAM server of the same assembly as `apistack serve` and the test
	// kit (servers/stack), alone on db.
	cfg := stack.Config{
		Clock: opts.Clock, Logger: logger,
		ValidateResponses: !opts.NoValidation, DisableValidation: opts.NoValidation, ResponseChecks: opts.ResponseChecks,
	}
	if onViolation != nil {
		cfg.OnResponseViolation = func(_ string, r *http.Request, status int, err error) { onViolation(r, status, err) }
	}
	srv, err := stack.NewServer(ctx, cfg, pam.API, opts.Settings, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	h, err := srv.Handler()
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	env = &Env{Server: srv, Operator: srv.Operator(), Handler: h, DB: db}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := Request{Method: r.Method, Path: r.URL.Path, At: time.Now()}
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		rec.Status = sw.status
		rec.RetryAt, _ = strconv.ParseInt(w.Header().Get("X-RateLimit-Retry-At"), 10, 64)
		env.mu.Lock()
		env.requests = append(env.requests, rec)
		env.mu.Unlock()
	}))
	env.URL = hs.URL
	return env, func() { hs.Close(); _ = db.Close() }, nil
}

// Requests returns the requests received so far.
func (e *Env) Requests() []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Request(nil), e.requests...)
}

// Count returns how many requests had this method and path.
func (e *Env) Count(method, path string) int {
	n := 0
	for _, r := range e.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// Team creates a team.
func (e *Env) Team(t testing.TB, name string) {
	t.Helper()
	_, err := e.Operator.CreateTeam(context.Background(), name)
	require.NoError(t, err)
}

// ServiceUser creates a service user in a group of its own with roles and
// returns its key.
func (e *Env) ServiceUser(t testing.TB, team, name string, roles ...string) pam.ServiceUserCredentials {
	t.Helper()
	if roles == nil {
		roles = []string{}
	}
	c, err := e.Operator.BootstrapServiceUser(context.Background(), team, name, name+"-group", roles, 0)
	require.NoError(t, err)
	return c
}

// Groups creates n groups named prefix-0000 ... in team, with no roles, and
// returns their names in the order the API lists them.
func (e *Env) Groups(t testing.TB, team, prefix string, n int) []string {
	t.Helper()
	names := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf("%s-%04d", prefix, i)
		require.NoError(t, e.Operator.CreateTeamGroup(context.Background(), team, name, nil))
		names = append(names, name)
	}
	return names
}

// HumanUser creates a human user.
func (e *Env) HumanUser(t testing.TB, team, name string) pam.User {
	t.Helper()
	u, err := e.Operator.CreateHumanUser(context.Background(), team, name)
	require.NoError(t, err)
	return u
}
