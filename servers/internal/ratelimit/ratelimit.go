// Package ratelimit is a token bucket per key (a principal, a team, a
// restaurant) on golang.org/x/time/rate, reporting what a client needs to
// pace itself: the limit, what remains, when the bucket is full again and
// when one more request will be allowed.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

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

// Limiter holds one bucket per key. It is safe for concurrent use.
type Limiter struct {
	limit  int
	period time.Duration
	every  rate.Limit
	clock  clock.Clock

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	takes   int
}

// New returns a Limiter allowing limit requests per period per key, refilled
// continuously, with bursts of up to limit.
func New(limit int, period time.Duration, clk clock.Clock) *Limiter {
	if limit < 1 {
		limit = 1
	}
	if clk == nil {
		clk = clock.System{}
	}
	return &Limiter{
		limit:   limit,
		period:  period,
		every:   rate.Limit(float64(limit) / period.Seconds()),
		clock:   clk,
		buckets: map[string]*rate.Limiter{},
	}
}

// Limit returns the requests allowed per period.
func (l *Limiter) Limit() int { return l.limit }

// Take spends one request of key's bucket when it has one.
func (l *Limiter) Take(key string) Decision {
	now := l.clock.Now()
	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(l.every, l.limit)
		b.SetLimitAt(now, l.every) // start the bucket's clock at now, not at the zero time
		l.buckets[key] = b
	}
	l.takes++
	if l.takes%4096 == 0 {
		l.sweep(now)
	}
	l.mu.Unlock()

	allowed := b.AllowN(now, 1)
	tokens := b.TokensAt(now)
	return l.decision(allowed, tokens, now)
}

// Peek reports key's bucket without spending from it.
func (l *Limiter) Peek(key string) Decision {
	now := l.clock.Now()
	l.mu.Lock()
	b, ok := l.buckets[key]
	l.mu.Unlock()
	tokens := float64(l.limit)
	if ok {
		tokens = b.TokensAt(now)
	}
	return l.decision(tokens >= 1, tokens, now)
}

func (l *Limiter) decision(allowed bool, tokens float64, now time.Time) Decision {
	if tokens < 0 {
		tokens = 0
	}
	d := Decision{
		Allowed:   allowed,
		Limit:     l.limit,
		Remaining: int(math.Floor(tokens)),
		Reset:     now.Add(l.secondsFor(float64(l.limit) - tokens)),
		RetryAt:   now,
	}
	if tokens < 1 {
		d.RetryAt = now.Add(l.secondsFor(1 - tokens))
	}
	return d
}

func (l *Limiter) secondsFor(tokens float64) time.Duration {
	if tokens <= 0 {
		return 0
	}
	return time.Duration(tokens / float64(l.every) * float64(time.Second))
}

// sweep drops full buckets: a full bucket is the same as no bucket, so memory
// stays proportional to the keys active within one period.
func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.limit) {
			delete(l.buckets, k)
		}
	}
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
