package ratelimit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
)

var migrations = fstest.MapFS{"00001_rate_limits.sql": &fstest.MapFile{Data: []byte("-- +goose Up\n" + Schema + "\n-- +goose Down\nDROP TABLE rate_limits;\n")}}

// stores returns every Store kind: in memory, and in SQL on each backend.
func stores(t *testing.T) map[string]func(t *testing.T) Store {
	return map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemoryStore() },
		"sqlite": func(t *testing.T) Store {
			return NewSQLStore(sqldb.New(testdb.OpenOn(t, testdb.SQLite, testdb.Migrations{Schema: "rl", SQLite: migrations, Postgres: migrations}), sqldb.Options{}))
		},
		"postgres": func(t *testing.T) Store {
			return NewSQLStore(sqldb.New(testdb.OpenOn(t, testdb.Postgres, testdb.Migrations{Schema: "rl", SQLite: migrations, Postgres: migrations}), sqldb.Options{}))
		},
	}
}

func TestLimiter_BurstThenRefillEveryStore(t *testing.T) {
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			l := New("requests", 5, time.Minute, clk, newStore(t))
			now := clk.Now()

			d, err := l.Peek(ctx, "alice")
			require.NoError(t, err)
			assert.Equal(t, Decision{Allowed: true, Limit: 5, Remaining: 5, Reset: now, RetryAt: now}, d)

			for i := range 5 {
				d, err := l.Take(ctx, "alice")
				require.NoError(t, err)
				assert.True(t, d.Allowed)
				assert.Equal(t, 4-i, d.Remaining)
				assert.Equal(t, now.Add(time.Duration(i+1)*12*time.Second), d.Reset)
			}
			d, err = l.Take(ctx, "alice")
			require.NoError(t, err)
			assert.False(t, d.Allowed)
			assert.Equal(t, 0, d.Remaining)
			assert.Equal(t, now.Add(12*time.Second), d.RetryAt, "one request fits after one interval")
			assert.Equal(t, now.Add(time.Minute), d.Reset)

			other, err := l.Take(ctx, "bob")
			require.NoError(t, err)
			assert.True(t, other.Allowed, "each key has its own bucket")

			clk.Advance(12 * time.Second)
			d, err = l.Take(ctx, "alice")
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			assert.Equal(t, 0, d.Remaining)

			clk.Advance(time.Hour)
			d, err = l.Peek(ctx, "alice")
			require.NoError(t, err)
			assert.Equal(t, 5, d.Remaining, "a bucket left alone refills to the limit, no further")
		})
	}
}

// Limiters sharing a store keep separate buckets under one key.
func TestLimiter_NamesSeparateLimitersOfOneStore(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	a := New("a", 1, time.Hour, nil, store)
	b := New("b", 1, time.Hour, nil, store)
	da, err := a.Take(ctx, "k")
	require.NoError(t, err)
	db, err := b.Take(ctx, "k")
	require.NoError(t, err)
	assert.True(t, da.Allowed)
	assert.True(t, db.Allowed)
}

// Under concurrent takes, exactly the limit is allowed, whatever the store.
func TestLimiter_ConcurrentTakesAllowExactlyTheLimit(t *testing.T) {
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			store := newStore(t)
			// Two limiters on one store stand for two replicas.
			replicas := []*Limiter{New("r", 20, time.Hour, clk, store), New("r", 20, time.Hour, clk, store)}
			var allowed atomic.Int64
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for range 10 {
						d, err := replicas[g%2].Take(ctx, "team")
						if assert.NoError(t, err) && d.Allowed {
							allowed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			assert.Equal(t, int64(20), allowed.Load())
		})
	}
}

// Concurrent takes of one client on two replicas' SQL stores are spent in
// batches, with the outcome of takes one after the other: exactly the
// limit allowed, each allowed request seeing its own place in the bucket
// (Remaining 19 down to 0, once each); and in a chain of two limits the
// first spends a request for each take and the second only for those the
// first allowed.
func TestSQLStore_ConcurrentTakesOfOneClientAreSpentAsIfOneAfterTheOther(t *testing.T) {
	onTwoReplicas(t, func(t *testing.T, ctx context.Context, replicated func(name string, limit int) [2]*Limiter) {
		limiters := replicated("one", 20)
		a, b := replicated("a", 10), replicated("b", 5)
		chains := [2][]*Limiter{{a[0], b[0]}, {a[1], b[1]}}
		var mu sync.Mutex
		var remaining []int
		var firstAllowed, bothAllowed int
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Go(func() {
				d, err := limiters[g%2].Take(ctx, "client")
				if assert.NoError(t, err) && d.Allowed {
					mu.Lock()
					remaining = append(remaining, d.Remaining)
					mu.Unlock()
				}
				ds, err := TakeAll(ctx, "client", chains[g%2]...)
				if assert.NoError(t, err) {
					mu.Lock()
					if ds[0].Allowed {
						firstAllowed++
					}
					if len(ds) == 2 && ds[1].Allowed {
						bothAllowed++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slices.Sort(remaining)
		assert.Equal(t, places(20), remaining)
		assert.Equal(t, 10, firstAllowed)
		assert.Equal(t, 5, bothAllowed)
	})
}

// Concurrent takes of many clients on two replicas' SQL stores: the
// clients' batches are spent together (one pipeline on PostgreSQL), and
// each client is held to its own limit exactly, each allowed request
// seeing its own place in its bucket.
func TestSQLStore_ConcurrentTakesOfManyClientsKeepEachLimitExact(t *testing.T) {
	onTwoReplicas(t, func(t *testing.T, ctx context.Context, replicated func(name string, limit int) [2]*Limiter) {
		limiters := replicated("one", 10)
		const clients, perClient = 12, 16
		var mu sync.Mutex
		remaining := map[string][]int{}
		var wg sync.WaitGroup
		for g := range clients * perClient {
			wg.Go(func() {
				client := fmt.Sprintf("client-%02d", g%clients)
				d, err := limiters[g%2].Take(ctx, client)
				if assert.NoError(t, err) && d.Allowed {
					mu.Lock()
					remaining[client] = append(remaining[client], d.Remaining)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, remaining, clients)
		for client, got := range remaining {
			slices.Sort(got)
			assert.Equal(t, places(10), got, client)
		}
	})
}

// onTwoReplicas runs test on SQLite and on PostgreSQL, giving it the
// limiters of two replicas whose SQL stores share a fresh database: for a
// limit by name, its limiter (per hour, on one fake clock) on each replica.
func onTwoReplicas(t *testing.T, test func(t *testing.T, ctx context.Context, replicated func(name string, limit int) [2]*Limiter)) {
	for _, backend := range []testdb.Backend{testdb.SQLite, testdb.Postgres} {
		t.Run(string(backend), func(t *testing.T) {
			replicas := twoReplicas(t, backend)
			clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			test(t, context.Background(), func(name string, limit int) [2]*Limiter {
				return [2]*Limiter{New(name, limit, time.Hour, clk, replicas[0]), New(name, limit, time.Hour, clk, replicas[1])}
			})
		})
	}
}

// places are the Remaining counts that n allowed takes of a bucket of n
// see, in order: 0 to n-1.
func places(n int) []int {
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	return want
}

// twoReplicas returns the SQL stores of two replicas sharing a fresh
// database of backend (on SQLite, one database's store twice).
func twoReplicas(t *testing.T, backend testdb.Backend) [2]*SQLStore {
	t.Helper()
	m := testdb.Migrations{Schema: "rl", SQLite: migrations, Postgres: migrations}
	if backend == testdb.Postgres {
		first, second := testdb.OpenSchemaTwice(t, m)
		return [2]*SQLStore{NewSQLStore(sqldb.New(first, sqldb.Options{})), NewSQLStore(sqldb.New(second, sqldb.Options{}))}
	}
	db := sqldb.New(testdb.OpenOn(t, backend, m), sqldb.Options{})
	return [2]*SQLStore{NewSQLStore(db), NewSQLStore(db)}
}
