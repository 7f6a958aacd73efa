// Package storagetest starts a real storage server for tests: a fresh SQLite
// database, the full HTTP stack on an httptest server, response validation on
// (any response that breaks the spec fails the test), an access key, a plain
// bucket and a versioned one, all of one account.
package storagetest

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/stack"
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

// Start runs a storage server until the test ends.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	env, stop, err := open(t.TempDir(), stacktest.OpenDB(t), opts, func(r *http.Request, status int, err error) {
		t.Errorf("storage response %d to %s %s breaks the spec: %v", status, r.Method, r.URL, err)
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	return env
}

// Open runs a storage server with its database in dir until stop is called;
// onViolation hears of every response that breaks the spec. Examples use it
// where there is no *testing.T.
func Open(dir string, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	return open(dir, stack.OpenFromTemplates(dir, stack.TempRoot()), opts, onViolation)
}

func open(dir string, openDB stack.OpenDBFunc, opts Options, onViolation func(r *http.Request, status int, err error)) (env *Env, stop func(), err error) {
	ctx := context.Background()
	// The storage server of the same assembly as `apistack serve` and the
	// test kit (servers/stack), its database and master key in dir.
	srv, db, err := stack.OpenServer(ctx, stack.Config{
		DataDir: dir, OpenDB: openDB, Clock: opts.Clock, ValidateResponses: true,
		OnResponseViolation: stacktest.PerAPI(onViolation),
		Logger:              slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, storage.API, storage.Settings{})
	if err != nil {
		return nil, nil, err
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
	return &Env{URL: ts.URL, Server: srv, Key: key, DB: db}, func() { ts.Close(); _ = db.Close() }, nil
}
