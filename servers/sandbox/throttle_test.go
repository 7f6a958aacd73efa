package sandbox_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/stack"
)

// TestTokens_WrongOnesAreThrottledPerSourceWithTheAdminAPIs: after 10 wrong
// tokens from one address, every request of that address bearing a token is
// refused 429 with Retry-After, the right token's too, on the sandbox API
// and on the admin API beside it (one count for the port); requests without
// a token are not counted.
func TestTokens_WrongOnesAreThrottledPerSourceWithTheAdminAPIs(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	wrong := e.client(t, "sbx_not-a-real-token")
	for i := range 10 {
		resp, err := wrong.GetSandboxWithResponse(ctx, b.Id)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode(), "wrong token %d: %s", i+1, resp.Body)
	}
	none := e.client(t, "")
	resp, err := none.GetSandboxWithResponse(ctx, b.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode(), "no token: not counted, not refused 429")

	for name, c := range map[string]*sandboxapi.ClientWithResponses{"a wrong token": wrong, "the sandbox's own": b.api, "the admin token": e.admin} {
		resp, err := c.GetSandboxWithResponse(ctx, b.Id)
		require.NoError(t, err)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode(), "%s: %s", name, resp.Body)
		require.NotNil(t, resp.JSON429, name)
		assert.Equal(t, sandboxapi.TooManyRequestsErrorErrorTooManyRequests, resp.JSON429.Error)
		secs, err := strconv.Atoi(resp.HTTPResponse.Header.Get("Retry-After"))
		require.NoError(t, err, name)
		assert.Positive(t, secs, name)
	}
	// The admin API on the same port counts the same guesses.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.urls[stack.Admin]+"/pam/teams/demo", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.st.AdminToken)
	adminResp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, adminResp.Body.Close())
	assert.Equal(t, http.StatusTooManyRequests, adminResp.StatusCode, "the admin API refuses the source too")
}
