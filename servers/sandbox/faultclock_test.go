package sandbox_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// A rate-limited fault's PAM headers are dated by the clock of the sandbox
// whose request it took, as its real rate limits are, not by the stack's.
func TestFaults_RateLimitHeadersAreDatedByTheSandboxsClock(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	sb := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	now := advance(t, sb, "5h").Now
	token, err := sb.pam.Token(ctx)
	require.NoError(t, err)
	addFault(t, sb, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindRateLimited, Api: apiOf("pam"), Operation: ptr("ListGroups"),
		Count: ptr(1), RetryAfter: ptr("2s")})
	resp, _ := testkit.Request{Method: http.MethodGet, URL: sb.Credentials.Pam.BaseUrl + "/v1/teams/" + sb.Credentials.Pam.Team + "/groups", Token: token}.Do(t)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	want := strconv.FormatInt(now.Add(2*time.Second).Unix(), 10)
	assert.Equal(t, want, resp.Header.Get("X-RateLimit-Reset"), "the sandbox's time is %s, the stack's %s", now, e.clock.Now())
	assert.Equal(t, want, resp.Header.Get("X-RateLimit-Retry-At"))
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
}
