// Package failguard limits failed attempts per source (a remote IP
// address): wrong admin tokens, wrong console logins. Each source has a
// token bucket of Burst failures refilled at one per Every; a source whose
// bucket is empty is refused before its attempt is even checked, right or
// wrong, until a token is back. Successful attempts cost nothing.
package failguard

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults: 10 failures at once, then one per 6 seconds (10 a minute).
const (
	DefaultBurst = 10
	DefaultEvery = 6 * time.Second
)

// maxSources is how many sources the guard remembers; past it, sources
// whose bucket is full again are forgotten.
const maxSources = 10000

// Guard counts failures per source. The zero value is not usable; use New.
type Guard struct {
	burst int
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	sources map[string]*rate.Limiter
}

// New returns a guard of burst failures refilled at one per every (0s mean
// the defaults), reading the time from now (nil means time.Now).
func New(burst int, every time.Duration, now func() time.Time) *Guard {
	if burst <= 0 {
		burst = DefaultBurst
	}
	if every <= 0 {
		every = DefaultEvery
	}
	if now == nil {
		now = time.Now
	}
	return &Guard{burst: burst, every: every, now: now, sources: map[string]*rate.Limiter{}}
}

// Source is the source of r: the IP address of its peer.
func Source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Blocked reports whether src has used up its failures, and when it may
// try again.
func (g *Guard) Blocked(src string) (retryAfter time.Duration, blocked bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	lim, ok := g.sources[src]
	if !ok {
		return 0, false
	}
	now := g.now()
	if lim.TokensAt(now) >= 1 {
		return 0, false
	}
	r := lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	r.CancelAt(now)
	return max(wait, time.Second), true
}

// Fail records a failed attempt of src.
func (g *Guard) Fail(src string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	lim, ok := g.sources[src]
	if !ok {
		if len(g.sources) >= maxSources {
			g.forgetFull(now)
		}
		lim = rate.NewLimiter(rate.Every(g.every), g.burst)
		g.sources[src] = lim
	}
	lim.AllowN(now, 1)
}

// forgetFull drops the sources whose bucket is full again.
func (g *Guard) forgetFull(now time.Time) {
	for src, lim := range g.sources {
		if lim.TokensAt(now) >= float64(g.burst) {
			delete(g.sources, src)
		}
	}
}
