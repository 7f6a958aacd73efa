package testdb

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// BenchmarkCrossReplicaInvalidation measures the bound between a commit on
// one replica and the drop of a cache following the same schema on another:
// each iteration commits a write through pool A (one statement, as a
// revocation like a key delete is) and waits until B's watcher has dropped
// its cache. It reports the median and the 99th percentile of the time from
// the moment A's commit returned (after-commit) and from before A sent it
// (with-write, which includes the write's own round trip).
func BenchmarkCrossReplicaInvalidation(b *testing.B) {
	m := Migrations{Schema: "notes", SQLite: notes, Postgres: notes}
	rawA, rawB := OpenSchemaTwice(b, m)
	a, rb := sqldb.New(rawA, sqldb.Options{}), sqldb.New(rawB, sqldb.Options{})
	c := cache.New[string](10, time.Minute)
	rb.Follow(c)
	dropped := make(chan time.Time, 1)
	rb.OnRemoteCommit(func() {
		select {
		case dropped <- time.Now():
		default:
		}
	})
	ctx := context.Background()
	require.Eventually(b, rb.Fresh, 10*time.Second, 10*time.Millisecond)
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
