package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCache_GetReturnsWhatWasPut(t *testing.T) {
	c := New[string](10, time.Minute)
	c.Put(c.Generation(), "k", "v")
	v, ok := c.Get("k")
	require.True(t, ok)
	assert.Equal(t, "v", v)
	_, ok = c.Get("other")
	assert.False(t, ok)
}

func TestCache_InvalidateForgetsEverything(t *testing.T) {
	c := New[int](10, time.Minute)
	for i := range 5 {
		c.Put(c.Generation(), fmt.Sprint(i), i)
	}
	c.Invalidate()
	assert.Equal(t, 0, c.Len())
	for i := range 5 {
		_, ok := c.Get(fmt.Sprint(i))
		assert.False(t, ok)
	}
}

func TestCache_PutOfALookupThatRacedAnInvalidateIsDropped(t *testing.T) {
	c := New[string](10, time.Minute)
	gen := c.Generation() // the lookup starts
	c.Invalidate()        // a revocation commits meanwhile
	c.Put(gen, "token", "principal read before the revocation")
	_, ok := c.Get("token")
	assert.False(t, ok, "a stale answer must not be cached")
	c.Put(c.Generation(), "token", "fresh")
	v, ok := c.Get("token")
	require.True(t, ok)
	assert.Equal(t, "fresh", v)
}

func TestCache_EntriesExpireAfterTheTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	c := New[string](10, time.Second)
	c.now = func() time.Time { return now }
	c.Put(c.Generation(), "k", "v")
	now = now.Add(999 * time.Millisecond)
	_, ok := c.Get("k")
	assert.True(t, ok)
	now = now.Add(2 * time.Millisecond)
	_, ok = c.Get("k")
	assert.False(t, ok)
}

func TestCache_HoldsAtMostMaxEntries(t *testing.T) {
	c := New[int](8, time.Minute)
	for i := range 100 {
		c.Put(c.Generation(), fmt.Sprint(i), i)
		assert.LessOrEqual(t, c.Len(), 8)
	}
	v, ok := c.Get("99")
	require.True(t, ok, "the newest entry is kept")
	assert.Equal(t, 99, v)
}

func TestCache_ConcurrentUse(t *testing.T) {
	c := New[int](64, time.Minute)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				k := fmt.Sprint((w * i) % 100)
				if _, ok := c.Get(k); !ok {
					c.Put(c.Generation(), k, i)
				}
				if i%250 == 0 {
					c.Invalidate()
				}
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, c.Len(), 64)
}

func TestCache_SizeZeroHoldsNothing(t *testing.T) {
	c := New[int](0, time.Minute)
	c.Put(c.Generation(), "k", 1)
	_, ok := c.Get("k")
	assert.False(t, ok)
	assert.Equal(t, 0, c.Len())
}

func TestCache_AGateThatIsNotFreshHidesAndRefusesEntries(t *testing.T) {
	var fresh atomic.Bool
	c := New[int](10, time.Minute)
	c.Gate(fresh.Load)
	c.Put(c.Generation(), "a", 1)
	_, ok := c.Get("a")
	assert.False(t, ok, "a Put while not fresh is not kept")

	fresh.Store(true)
	c.Put(c.Generation(), "a", 1)
	v, ok := c.Get("a")
	require.True(t, ok)
	assert.Equal(t, 1, v)

	fresh.Store(false)
	_, ok = c.Get("a")
	assert.False(t, ok, "an entry is not answered while the gate is shut")
	fresh.Store(true)
	_, ok = c.Get("a")
	assert.True(t, ok, "the entry is answered again once the gate opens")
}

// Load reads through: a miss calls load once and caches its value, a hit
// calls nothing, an error is returned and not cached, and a value read while
// an Invalidate happened is answered but not cached.
func TestCache_LoadReadsThroughAndCachesOnlyWhatItMayKeep(t *testing.T) {
	c := New[string](10, time.Minute)
	calls := 0
	load := func(v string, err error) func() (string, error) {
		return func() (string, error) { calls++; return v, err }
	}

	v, err := c.Load("k", load("v", nil))
	require.NoError(t, err)
	assert.Equal(t, "v", v)
	v, err = c.Load("k", load("other", nil))
	require.NoError(t, err)
	assert.Equal(t, "v", v, "the cached value")
	assert.Equal(t, 1, calls, "a hit loads nothing")

	missing := errors.New("not found")
	_, err = c.Load("gone", load("", missing))
	require.ErrorIs(t, err, missing)
	_, ok := c.Get("gone")
	assert.False(t, ok, "an error is not cached")

	v, err = c.Load("raced", func() (string, error) { c.Invalidate(); return "stale", nil })
	require.NoError(t, err)
	assert.Equal(t, "stale", v)
	_, ok = c.Get("raced")
	assert.False(t, ok, "a value read across an Invalidate is not cached")
}
