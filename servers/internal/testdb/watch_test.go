package testdb

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// replicaPair is two pools on one fresh schema of notes, as two replicas
// (raw and wrapped), and a cache the second follows.
type replicaPair struct {
	rawA, rawB *sql.DB
	a, b       *sqldb.DB
	c          *cache.Cache[string]
}

// followingPair opens a replicaPair and returns once its second pool
// listens.
func followingPair(t testing.TB) replicaPair {
	t.Helper()
	var p replicaPair
	p.rawA, p.rawB = OpenSchemaTwice(t, Migrations{Schema: "notes", SQLite: notes, Postgres: notes})
	p.a, p.b = sqldb.New(p.rawA, sqldb.Options{}), sqldb.New(p.rawB, sqldb.Options{})
	p.c = cache.New[string](10, time.Minute)
	p.b.Follow(p.c)
	require.Eventually(t, p.b.Fresh, 10*time.Second, 10*time.Millisecond, "B listens")
	return p
}

// Two pools on one schema, as two replicas: a cache following one is
// dropped by the other's commit as soon as the commit is heard, never by its
// own pool's commits (those are the service's to act on), and answers
// nothing while its listening session is lost, until it listens again.
func TestFollow_ACacheIsDroppedByAnotherReplicasCommitAndBypassedWhileDeaf(t *testing.T) {
	p := followingPair(t)
	a, b, c := p.a, p.b, p.c
	ctx := context.Background()

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
	require.NoError(t, p.rawA.QueryRowContext(ctx,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, pgdb.WatcherName(p.rawB)).Scan(&n))
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

// BenchmarkCrossReplicaInvalidation measures the bound between a commit on
// one replica and the drop of a cache following the same schema on another:
// each iteration commits a write through pool A (one statement, as a
// revocation like a key delete is) and waits until B's watcher has dropped
// its cache. It reports the median and the 99th percentile of the time from
// the moment A's commit returned (after-commit) and from before A sent it
// (with-write, which includes the write's own round trip).
func BenchmarkCrossReplicaInvalidation(b *testing.B) {
	p := followingPair(b)
	a, rb, c := p.a, p.b, p.c
	dropped := make(chan time.Time, 1)
	rb.OnRemoteCommit(func() {
		select {
		case dropped <- time.Now():
		default:
		}
	})
	ctx := context.Background()
	// Drain the report of B's first listen.
	require.NoError(b, rb.Sync(ctx))
	select {
	case <-dropped:
	default:
	}
	_, err := a.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('k', '', 0)`)
	require.NoError(b, err)
	<-dropped
	after := make([]time.Duration, 0, b.N)
	with := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		c.Put(c.Generation(), "k", "v")
		start := time.Now()
		if _, err := a.ExecContext(ctx, `UPDATE notes SET n = ? WHERE id = 'k'`, i); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		at := <-dropped
		if _, ok := c.Get("k"); ok {
			b.Fatal("the cache was not dropped")
		}
		after = append(after, at.Sub(committed))
		with = append(with, at.Sub(start))
	}
	b.StopTimer()
	report := func(d []time.Duration, name string) {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), name+"-p50-us")
		b.ReportMetric(float64(d[min(len(d)-1, len(d)*99/100)].Microseconds()), name+"-p99-us")
	}
	report(after, "after-commit")
	report(with, "with-write")
}
