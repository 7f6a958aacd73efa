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
)

// Once a source sent too many wrong tokens, every operation it calls with a
// token, its sandbox's own, answers 429 with Retry-After and the error body,
// before anything else is looked at (the ids below name nothing).
func TestTokens_AThrottledSourceIsAnswered429ByEveryOperation(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	wrong := e.client(t, "sbx_not-a-real-token")
	for i := range 10 {
		resp, err := wrong.GetSandboxWithResponse(ctx, b.Id)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode(), "wrong token %d: %s", i+1, resp.Body)
	}
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
