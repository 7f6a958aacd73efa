package sandbox_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

// TestInbox_AnUnsignedRequestLearnsNothingOfWhichSandboxesExist: an
// unsigned or badly signed POST to a sandbox's inbox answers the same for
// a sandbox that exists and one that does not; only a delivery this stack
// signed learns that a sandbox is gone (404).
func TestInbox_AnUnsignedRequestLearnsNothingOfWhichSandboxesExist(t *testing.T) {
	e := start(t, envOptions{})
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	gone := e.create(t, sandboxapi.CreateSandboxRequest{})
	resp, err := gone.api.DeleteSandboxWithResponse(context.Background(), gone.Id)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, resp.StatusCode())
	const unknown = "sbx-0123456789abcdef"

	post := func(id string, headers map[string]string, body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, e.urls[stack.Admin]+sandbox.InboxPathOf(id), bytes.NewBufferString(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(bytes.ReplaceAll(bytes.ReplaceAll(out, []byte(id), []byte("ID")), []byte(b.Id), []byte("ID")))
	}
	forged := map[string]string{"Webhook-Signature-Ed25519": "AAAA", "Webhook-Timestamp": "1700000000"}
	for name, headers := range map[string]map[string]string{"unsigned": nil, "forged": forged} {
		realStatus, realBody := post(b.Id, headers, `{"data":{},"meta":{}}`)
		assert.Equal(t, http.StatusUnauthorized, realStatus, name)
		for _, id := range []string{unknown, gone.Id} {
			status, body := post(id, headers, `{"data":{},"meta":{}}`)
			assert.Equal(t, realStatus, status, "%s to %s", name, id)
			assert.Equal(t, realBody, body, "%s to %s", name, id)
		}
	}

	// A delivery the stack signed: 204 at its sandbox, 404 where there is
	// none.
	e.sendFax(t, b, "+13125550100")
	page := e.driveUntil(t, b, "a delivery", func(p *sandboxapi.WebhookLogPage) bool { return len(p.Data) > 0 })
	signed := page.Data[0]
	status, _ := post(b.Id, signed.Headers, signed.Body)
	assert.Equal(t, http.StatusNoContent, status, "a signed delivery at its sandbox")
	status, _ = post(unknown, signed.Headers, signed.Body)
	assert.Equal(t, http.StatusNotFound, status, "a signed delivery to no sandbox")
}
