package failguard

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestGuard_BlocksASourceAfterItsBurstAndOnlyThatSource(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	g := New(3, 10*time.Second, func() time.Time { return now })
	for range 3 {
		_, blocked := g.Blocked("a")
		assert.False(t, blocked)
		g.Fail("a")
	}
	wait, blocked := g.Blocked("a")
	assert.True(t, blocked, "the fourth attempt is refused")
	assert.Equal(t, 10*time.Second, wait)
	_, blocked = g.Blocked("b")
	assert.False(t, blocked, "another source is not")
	now = now.Add(10 * time.Second)
	_, blocked = g.Blocked("a")
	assert.False(t, blocked, "one failure back after Every")
	g.Fail("a")
	_, blocked = g.Blocked("a")
	assert.True(t, blocked)
}

func TestGuard_ForgetsFullSourcesPastItsSize(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	g := New(1, time.Second, func() time.Time { return now })
	for i := range maxSources {
		g.Fail(string(rune(i)))
	}
	now = now.Add(time.Minute)
	g.Fail("new")
	assert.Len(t, g.sources, 1, "the full ones were forgotten")
}

func TestSource(t *testing.T) {
	assert.Equal(t, "192.0.2.7", Source(&http.Request{RemoteAddr: "192.0.2.7:51234"}))
	assert.Equal(t, "::1", Source(&http.Request{RemoteAddr: "[::1]:80"}))
}
