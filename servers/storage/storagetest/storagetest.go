// Package storagetest starts a real storage server for tests: a fresh SQLite
// database, the full HTTP stack on an httptest server, response validation on
// (any response that breaks the spec fails the test), an access key, a plain
// bucket and a versioned one, all of one account.
package storagetest

import (
	"context"
	"database/sql"
	"net/http"
	"testing"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/stacktest"
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
	// Server is the storage server.
	Server *storage.Server
	// Operator is the server's operator calls (buckets, keys, LifecycleCount).
	Operator *storage.Operator
	// Key is an access key that signs requests.
	Key storage.AccessKey
	// DB is the server's database, for tests that make it fail.
	DB *sql.DB
}

// Start runs a storage server until the test ends.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	env := &Env{}
	served := stacktest.Start(t, storage.API, storage.Settings{}, stacktest.Harness{Clock: opts.Clock}, env.seed)
	env.set(served)
	return env
}

// Open runs a storage server with its database in dir until stop is called;
// onViolation hears of every response that breaks the spec. Examples use it
// where there is no *testing.T.
func Open(dir string, opts Options, onViolation func(r *http.Request, status int, err error)) (*Env, func(), error) {
	env := &Env{}
	served, stop, err := stacktest.Serve(dir, nil, storage.API, storage.Settings{}, stacktest.Harness{Clock: opts.Clock}, env.seed, onViolation)
	env.set(served)
	return env, stop, err
}

func (e *Env) set(s stacktest.Served[*storage.Server]) {
	e.URL, e.Server, e.Operator, e.DB = s.URL, s.Server, s.Server.Operator(), s.DB
}

// seed makes the access key and the two buckets of every Env.
func (e *Env) seed(s *storage.Server) error {
	ctx, srv := context.Background(), s.Operator()
	key, err := srv.CreateKey(ctx, Account, "tests")
	if err == nil {
		_, err = srv.CreateBucket(ctx, Account, Bucket, storage.Unversioned)
	}
	if err == nil {
		_, err = srv.CreateBucket(ctx, Account, VersionedBucket, storage.Enabled)
	}
	e.Key = key
	return err
}
