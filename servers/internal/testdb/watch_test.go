package testdb

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// Two pools on one schema, as two replicas: a cache following one is
// dropped by the other's commit as soon as the commit is heard, never by its
// own pool's commits (those are the service's to act on), and answers
// nothing while its listening session is lost, until it listens again.
func TestFollow_ACacheIsDroppedByAnotherReplicasCommitAndBypassedWhileDeaf(t *testing.T) {
	m := Migrations{Schema: "notes", SQLite: notes, Postgres: notes}
	rawA, rawB := OpenSchemaTwice(t, m)
	a, b := sqldb.New(rawA, sqldb.Options{}), sqldb.New(rawB, sqldb.Options{})
	ctx := context.Background()
	c := cache.New[string](10, time.Minute)
	b.Follow(c)
	require.Eventually(t, b.Fresh, 10*time.Second, 10*time.Millisecond, "B listens")

	c.Put(c.Generation(), "k", "v")
	_, ok := c.Get("k")
	require.True(t, ok)

	// B's own commit: heard by nobody in B.
	heard := b.Heard()
	_, err := b.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('b', '', 0)`)
	require.NoError(t, err)
	require.NoError(t, b.Sync(ctx))
	assert.Equal(t, heard, b.Heard(), "a replica does not hear its own commits")
	_, ok = c.Get("k")
	assert.True(t, ok)

	// A's commit: B drops the cache once it heard it.
	_, err = a.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('a', '', 0)`)
	require.NoError(t, err)
	require.NoError(t, b.Sync(ctx))
	_, ok = c.Get("k")
	assert.False(t, ok, "dropped by another replica's commit")

	// B's listening session ends: B's cache answers nothing until B
	// listens again, and what it held before is gone then.
	c.Put(c.Generation(), "k", "v")
	_, ok = c.Get("k")
	require.True(t, ok)
	heard = b.Heard()
	var n int
	require.NoError(t, rawA.QueryRowContext(ctx,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, pgdb.WatcherName(rawB)).Scan(&n))
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool { return b.Heard() > heard }, 10*time.Second, 5*time.Millisecond, "B listens again")
	assert.True(t, b.Fresh())
	_, ok = c.Get("k")
	assert.False(t, ok, "dropped on listening again")
}

// OpenWith's MaxConns bounds the pool; 0 keeps the default.
func TestOpenWith_MaxConnsBoundsThePool(t *testing.T) {
	url, schema := OpenShared(t, Migrations{Schema: "notes", SQLite: notes, Postgres: notes})
	for _, n := range []int{0, 3} {
		db, err := pgdb.OpenWith(context.Background(), url, schema, notes, pgdb.Options{MaxConns: n})
		require.NoError(t, err)
		want := n
		if n == 0 {
			want = pgdb.DefaultMaxConns
		}
		assert.Equal(t, want, db.Stats().MaxOpenConnections)
		require.NoError(t, db.Close())
	}
}
