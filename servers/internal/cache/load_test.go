package cache

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
