package sandbox_test

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/testkit"
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
	b, wrong := throttledSandbox(t, e)
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
	adminResp, _ := testkit.Request{Method: http.MethodGet, URL: e.urls[stack.Admin] + "/pam/teams/demo", Token: e.st.AdminToken}.Do(t)
	assert.Equal(t, http.StatusTooManyRequests, adminResp.StatusCode, "the admin API refuses the source too")
}

// Once a source sent too many wrong tokens, every operation it calls with a
// token, its sandbox's own, answers 429 with Retry-After and the error body,
// before anything else is looked at (the ids below name nothing).
func TestTokens_AThrottledSourceIsAnswered429ByEveryOperation(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b, _ := throttledSandbox(t, e)
	c, id := b.api, b.Id
	body := func() *strings.Reader { return strings.NewReader("{}") }
	const js = "application/json"
	ops := []struct {
		name string
		call func() (*http.Response, error)
	}{
		{"DeleteSandbox", func() (*http.Response, error) { return answered(c.DeleteSandboxWithResponse(ctx, id)) }},
		{"GetSandboxClock", func() (*http.Response, error) { return answered(c.GetSandboxClockWithResponse(ctx, id)) }},
		{"AdvanceSandboxClock", func() (*http.Response, error) {
			return answered(c.AdvanceSandboxClockWithBodyWithResponse(ctx, id, js, body()))
		}},
		{"ClearSandboxFaults", func() (*http.Response, error) { return answered(c.ClearSandboxFaultsWithResponse(ctx, id)) }},
		{"ListSandboxFaults", func() (*http.Response, error) { return answered(c.ListSandboxFaultsWithResponse(ctx, id)) }},
		{"AddSandboxFault", func() (*http.Response, error) {
			return answered(c.AddSandboxFaultWithBodyWithResponse(ctx, id, js, body()))
		}},
		{"DeleteSandboxFault", func() (*http.Response, error) {
			return answered(c.DeleteSandboxFaultWithResponse(ctx, id, "flt-none"))
		}},
		{"ListSandboxRequests", func() (*http.Response, error) { return answered(c.ListSandboxRequestsWithResponse(ctx, id, nil)) }},
		{"ResetSandbox", func() (*http.Response, error) { return answered(c.ResetSandboxWithResponse(ctx, id)) }},
		{"ListSandboxSnapshots", func() (*http.Response, error) { return answered(c.ListSandboxSnapshotsWithResponse(ctx, id)) }},
		{"CreateSandboxSnapshot", func() (*http.Response, error) {
			return answered(c.CreateSandboxSnapshotWithBodyWithResponse(ctx, id, js, body()))
		}},
		{"GetSandboxSnapshot", func() (*http.Response, error) {
			return answered(c.GetSandboxSnapshotWithResponse(ctx, id, "snp-none"))
		}},
		{"DeleteSandboxSnapshot", func() (*http.Response, error) {
			return answered(c.DeleteSandboxSnapshotWithResponse(ctx, id, "snp-none"))
		}},
		{"TriggerInboundFax", func() (*http.Response, error) {
			return answered(c.TriggerInboundFaxWithBodyWithResponse(ctx, id, js, body()))
		}},
		{"ListSandboxWebhooks", func() (*http.Response, error) { return answered(c.ListSandboxWebhooksWithResponse(ctx, id, nil)) }},
		{"RedeliverSandboxWebhook", func() (*http.Response, error) {
			return answered(c.RedeliverSandboxWebhookWithResponse(ctx, id, uuid.New()))
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			resp, err := op.call()
			require.NoError(t, err)
			require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			require.NoError(t, err, "Retry-After in seconds")
			assert.Positive(t, secs)
		})
	}
}

// answered is the HTTP answer of a generated response (its HTTPResponse
// field, which every generated response type has).
func answered(r any, err error) (*http.Response, error) {
	if err != nil {
		return nil, err
	}
	return reflect.ValueOf(r).Elem().FieldByName("HTTPResponse").Interface().(*http.Response), nil
}

// throttledSandbox creates a sandbox on e and then calls it with 10 wrong
// tokens, each answered 401, which is what it takes for the source to be
// throttled. It returns the sandbox and the client with the wrong token.
func throttledSandbox(t *testing.T, e *env) (*box, *sandboxapi.ClientWithResponses) {
	t.Helper()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	wrong := e.client(t, "sbx_not-a-real-token")
	for i := range 10 {
		resp, err := wrong.GetSandboxWithResponse(context.Background(), b.Id)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode(), "wrong token %d: %s", i+1, resp.Body)
	}
	return b, wrong
}
