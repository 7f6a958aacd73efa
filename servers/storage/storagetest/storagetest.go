// Package storagetest starts a real storage server for tests: a fresh
// database (SQLite, or PostgreSQL when the test run is on it), the full HTTP
// stack on an httptest server, response validation on (any response that
// breaks the spec fails the test), an access key, a plain bucket and a
// versioned one, all of one account.
package storagetest

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/storage"
)

// The buckets every Env has.
const (
	// Bucket has no versioning: its rules use Expiration.
	Bucket = "photos"
	// VersionedBucket has versioning enabled: its rules use NoncurrentVersionExpiration.
	VersionedBucket = "archive"
	// Account owns both buckets and Env.Key.
	Account = storage.DefaultAccount
)

// Options tunes the server under test; the zero value is the defaults.
type Options struct {
	// Clock drives the server's time; nil means the system clock.
	Clock clock.Clock
}

// Env is a running storage server.
type Env struct {
	// URL is the server's base URL.
	URL string
	// Server is the storage server, for operator calls and LifecycleCount.
	Server *storage.Server
	// Key is an access key that signs requests.
	Key storage.AccessKey
	// DB is the server's database, for tests that make it fail.
	DB *sql.DB
}

// Start runs a storage server until the test ends, on a fresh database of
// the test run's backend (testdb: SQLite, or PostgreSQL with
// APISTACK_TEST_BACKEND=postgres).
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	db := testdb.Open(t, testdb.Migrations{Schema: "storage", SQLite: storage.Migrations(), Postgres: storage.PostgresMigrations()})
	env, stop, err := run(db, t.TempDir(), opts, func(r *http.Request, status int, err error) {
		t.Errorf("storage response %d to %s %s breaks the spec: %v", status, r.Method, r.URL, err)
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	return env
}

// Open runs a storage server with its SQLite database in dir until stop is
// called; onViolation hears of every response that breaks the spec. Examples
// use it where there is no *testing.T.
func Open(dir string, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	db, err := sqlitedb.Open(context.Background(), filepath.Join(dir, "storage.db"), storage.Migrations())
	if err != nil {
		return nil, nil, err
	}
	return run(db, dir, opts, onViolation)
}

// run starts the server on db with its master key in dir; it closes db when
// stop is called or starting fails.
func run(db *sql.DB, dir string, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	ctx := context.Background()
	masterKey, err := storage.LoadOrCreateMasterKey(filepath.Join(dir, "storage-master.key"))
	if err != nil {
		return nil, nil, errors.Join(err, db.Close())
	}
	srv, err := storage.New(storage.Config{
		DB: db, MasterKey: masterKey, Clock: opts.Clock, ValidateResponses: true, OnResponseViolation: onViolation,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, nil, errors.Join(err, db.Close())
	}
	h, err := srv.Handler()
	if err != nil {
		return nil, nil, errors.Join(err, db.Close())
	}
	key, err := srv.CreateKey(ctx, Account, "tests")
	if err == nil {
		_, err = srv.CreateBucket(ctx, Account, Bucket, storage.Unversioned)
	}
	if err == nil {
		_, err = srv.CreateBucket(ctx, Account, VersionedBucket, storage.Enabled)
	}
	if err != nil {
		return nil, nil, errors.Join(err, db.Close())
	}
	ts := httptest.NewServer(h)
	return &Env{URL: ts.URL, Server: srv, Key: key, DB: db}, func() { ts.Close(); db.Close() }, nil
}
