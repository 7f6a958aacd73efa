package pam

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSetRateHeadersOnSetsAsHeaderSet: the rate headers come out exactly as
// http.Header.Set writes them, whatever the header held before: nothing,
// the same values (the middleware's, repeated by the answer), other values,
// or several values under one name.
func TestSetRateHeadersOnSetsAsHeaderSet(t *testing.T) {
	rh := rateHeaders{XRateLimitLimit: 600, XRateLimitRemaining: 0, XRateLimitReset: 1795000000, XRateLimitRetryAt: -1}
	for name, before := range map[string]http.Header{
		"empty":       {},
		"same values": {"X-Ratelimit-Limit": {"600"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1795000000"}, "X-Ratelimit-Retry-At": {"-1"}},
		"other values": {"X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Remaining": {"9"}, "X-Ratelimit-Reset": {"1"}, "X-Ratelimit-Retry-At": {"2"},
			"Content-Type": {"application/json"}},
		"several values": {"X-Ratelimit-Limit": {"600", "600"}, "X-Ratelimit-Remaining": {}},
	} {
		t.Run(name, func(t *testing.T) {
			want, got := before.Clone(), before.Clone()
			want.Set("X-RateLimit-Limit", "600")
			want.Set("X-RateLimit-Remaining", "0")
			want.Set("X-RateLimit-Reset", "1795000000")
			want.Set("X-RateLimit-Retry-At", "-1")
			setRateHeadersOn(got, rh)
			assert.Equal(t, want, got)
		})
	}
}
