// Package cache is an in-memory cache whose every entry a writer can drop at
// once. The services keep two kinds of things in it:
//
//   - what a credential resolved to (a bearer token's principal, an API key's
//     account, a caller's roles), so that authenticating a request needs no
//     database round trip, while revocation stays immediate: a service calls
//     Invalidate after every committed change that can take access away (a
//     key deleted, a user disabled, a group's roles or members changed);
//   - pages of lists read from the database, dropped after every committed
//     write to it (sqldb.DB.OnCommit), so a list read again before anything
//     changed costs no query.
//
// Invalidations are rare next to reads, so a whole flush costs one lookup per
// entry in use afterwards. An entry is also forgotten after a TTL, and the
// cache holds at most a bounded number of entries.
//
// A lookup that raced an invalidation cannot put its stale answer back: Put
// takes the generation read before the lookup (Generation) and drops the
// value when an Invalidate came in between.
package cache

import (
	"sync"
	"time"
)

// Cache maps credentials (their hashes, never the secrets) to what they
// resolved to. It is safe for concurrent use.
type Cache[V any] struct {
	max int
	ttl time.Duration
	now func() time.Time

	// fresh, when set (Gate), tells whether what the cache holds can be
	// trusted: while it reports false, Get finds nothing and Put keeps
	// nothing.
	fresh func() bool

	mu      sync.RWMutex
	gen     uint64
	entries map[string]entry[V]
}

type entry[V any] struct {
	value   V
	expires time.Time
}

// New returns a cache of at most max entries, each kept at most ttl. The
// TTL is wall-clock time: it bounds how long an entry lives in memory and
// never decides whether a credential is valid (callers check expiry on the
// value they get, against their own clock).
//
// A max of 0 (or less) makes a cache that holds nothing. A cache of what a
// database other replicas write too holds entries only while it hears their
// commits (Gate, and sqldb.DB.Follow).
func New[V any](max int, ttl time.Duration) *Cache[V] {
	return &Cache[V]{max: max, ttl: ttl, now: time.Now, entries: make(map[string]entry[V])}
}

// Gate makes the cache answer only while fresh reports true: a cache of a
// database other processes write holds its entries only while this process
// hears of their commits (sqldb.DB.Fresh); while it does not, every lookup
// misses and goes to the database. Call Gate before the cache is used.
func (c *Cache[V]) Gate(fresh func() bool) { c.fresh = fresh }

// Get returns the value cached for key.
func (c *Cache[V]) Get(key string) (V, bool) {
	if c.fresh != nil && !c.fresh() {
		var zero V
		return zero, false
	}
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || c.now().After(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Generation returns the current generation: read it before looking a
// credential up, and hand it to Put with the answer.
func (c *Cache[V]) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// Put caches value for key if no Invalidate happened since gen was read.
func (c *Cache[V]) Put(gen uint64, key string, value V) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.max <= 0 || (c.fresh != nil && !c.fresh()) {
		return
	}
	if len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[key] = entry[V]{value: value, expires: now.Add(c.ttl)}
}

// evict makes room for a tenth of the cache, so a full cache is scanned
// once per that many Puts, not at every one: expired entries first, then any
// (map order is random, which is a fair choice for a cache of credentials).
// Called with mu held.
func (c *Cache[V]) evict(now time.Time) {
	for k, e := range c.entries {
		if now.After(e.expires) {
			delete(c.entries, k)
		}
	}
	target := c.max - max(1, c.max/10)
	for k := range c.entries {
		if len(c.entries) <= target {
			return
		}
		delete(c.entries, k)
	}
}

// Delete forgets key.
func (c *Cache[V]) Delete(key string) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

// Invalidate forgets every entry and refuses the Puts of lookups that began
// before it.
func (c *Cache[V]) Invalidate() {
	c.mu.Lock()
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}

// Len returns the number of entries held.
func (c *Cache[V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
