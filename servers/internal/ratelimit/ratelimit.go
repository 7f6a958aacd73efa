// Package ratelimit limits requests per key (a principal, a source address,
// a restaurant) with the generic cell rate algorithm (GCRA), and reports what
// a client needs to pace itself: the limit, what remains, when the bucket is
// full again and when one more request will be allowed.
//
// GCRA is a token bucket kept as one instant per key, the theoretical
// arrival time (TAT): the bucket is full when the TAT is not after now, and
// each request moves it one emission interval (period/limit) later; a request
// is refused when that would put it more than one period ahead of now. One
// instant per key makes the state one row, updated by one atomic statement,
// which is what lets replicas sharing a PostgreSQL database share their
// limits (SQLStore). On SQLite, where one process owns the database, the
// state stays in that process's memory (MemoryStore): a write per request
// would queue every request behind the database's single writer.
package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/apistack/apistack/servers/clock"
)

// Decision is the outcome of one Take.
type Decision struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Limit is the number of requests allowed per period (the bucket size).
	Limit int
	// Remaining is the number of whole requests left in the bucket now.
	Remaining int
	// Reset is when the bucket will be full again.
	Reset time.Time
	// RetryAt is when one request will be allowed again (now when one is).
	RetryAt time.Time
}

// Store keeps the TAT of each key.
type Store interface {
	// Take spends one request of key when its TAT allows it: with
	// next = max(tat, now) + interval, the request is allowed, and the TAT
	// becomes next, when next - now <= period. It returns the TAT after the
	// call (a missing key's TAT is now) and whether the request was allowed.
	Take(ctx context.Context, key string, now time.Time, interval, period time.Duration) (tat time.Time, allowed bool, err error)
	// Peek returns key's TAT; ok is false when the key has none (a full
	// bucket).
	Peek(ctx context.Context, key string) (tat time.Time, ok bool, err error)
}

// Limiter allows limit requests per period per key, refilled continuously,
// with bursts of up to limit. It is safe for concurrent use.
type Limiter struct {
	limit    int
	period   time.Duration
	interval time.Duration
	clock    clock.Clock
	store    Store
	// prefix separates the keys of limiters sharing one store.
	prefix string
}

// New returns a Limiter keeping its state in store (nil: a MemoryStore of
// its own). name prefixes its keys, so limiters can share a store.
func New(name string, limit int, period time.Duration, clk clock.Clock, store Store) *Limiter {
	if limit < 1 {
		limit = 1
	}
	if period <= 0 {
		period = time.Second
	}
	if clk == nil {
		clk = clock.System{}
	}
	if store == nil {
		store = NewMemoryStore()
	}
	return &Limiter{
		limit:    limit,
		period:   period,
		interval: max(period/time.Duration(limit), time.Microsecond),
		clock:    clk,
		store:    store,
		prefix:   name + ":",
	}
}

// Limit returns the requests allowed per period.
func (l *Limiter) Limit() int { return l.limit }

type clockKey struct{}

// WithClock makes the limiters read clk's time, not their own clock's, for
// the buckets spent or read with the returned context: the clock of the
// tenant a request is of (a sandbox's own clock), so its windows follow it.
func WithClock(ctx context.Context, clk clock.Clock) context.Context {
	return context.WithValue(ctx, clockKey{}, clk)
}

// now is the time of a take or peek made with ctx.
func (l *Limiter) now(ctx context.Context) time.Time {
	if clk, ok := ctx.Value(clockKey{}).(clock.Clock); ok && clk != nil {
		return clk.Now()
	}
	return l.clock.Now()
}

// Take spends one request of key's bucket when it has one.
func (l *Limiter) Take(ctx context.Context, key string) (Decision, error) {
	now := l.now(ctx)
	tat, allowed, err := l.store.Take(ctx, l.prefix+key, now, l.interval, l.period)
	if err != nil {
		return Decision{}, err
	}
	return l.decision(allowed, tat, now), nil
}

// Peek reports key's bucket without spending from it.
func (l *Limiter) Peek(ctx context.Context, key string) (Decision, error) {
	now := l.now(ctx)
	tat, ok, err := l.store.Peek(ctx, l.prefix+key)
	if err != nil {
		return Decision{}, err
	}
	if !ok || tat.Before(now) {
		tat = now
	}
	return l.decision(tat.Add(l.interval).Sub(now) <= l.period, tat, now), nil
}

func (l *Limiter) decision(allowed bool, tat, now time.Time) Decision {
	if tat.Before(now) {
		tat = now
	}
	// The bucket holds what the TAT leaves of one period, in intervals.
	room := l.period - tat.Sub(now)
	d := Decision{
		Allowed:   allowed,
		Limit:     l.limit,
		Remaining: max(0, min(l.limit, int(math.Floor(float64(room)/float64(l.interval))))),
		Reset:     tat,
		RetryAt:   now,
	}
	if d.Remaining < 1 {
		// One request fits when max(tat, t) + interval - t <= period.
		d.RetryAt = tat.Add(l.interval - l.period)
		if d.RetryAt.Before(now) {
			d.RetryAt = now
		}
	}
	return d
}

// UnixCeil returns t as Unix seconds rounded up, so a client that waits until
// that second is never early.
func UnixCeil(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// MemoryStore keeps TATs in this process's memory. It is safe for
// concurrent use.
type MemoryStore struct {
	mu    sync.Mutex
	tats  map[string]time.Time
	takes int
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{tats: map[string]time.Time{}} }

// Take implements Store.
func (m *MemoryStore) Take(_ context.Context, key string, now time.Time, interval, period time.Duration) (time.Time, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.takes++
	if m.takes%4096 == 0 {
		m.sweep(now)
	}
	tat, ok := m.tats[key]
	if !ok || tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	if next.Sub(now) > period {
		return tat, false, nil
	}
	m.tats[key] = next
	return next, true, nil
}

// Peek implements Store.
func (m *MemoryStore) Peek(_ context.Context, key string) (time.Time, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tat, ok := m.tats[key]
	return tat, ok, nil
}

// sweep drops the keys whose bucket is full (TAT passed): a full bucket is
// the same as no key, so memory stays proportional to the keys active within
// one period.
func (m *MemoryStore) sweep(now time.Time) {
	for k, tat := range m.tats {
		if !tat.After(now) {
			delete(m.tats, k)
		}
	}
}
