package sandbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

// operation is one call of each operation of the sandbox API.
type operation struct{ id, method, path, body string }

// operations are one call of every operation on sandbox id.
func operations(id string) []operation {
	return []operation{
		{"CreateSandbox", http.MethodPost, "/sandboxes", `{"clock": "frozen"}`},
		{"GetSandbox", http.MethodGet, "/sandboxes/" + id, ""},
		{"GetSandboxClock", http.MethodGet, "/sandboxes/" + id + "/clock", ""},
		{"AdvanceSandboxClock", http.MethodPost, "/sandboxes/" + id + "/clock", `{"advance": "1s"}`},
		{"ResetSandbox", http.MethodPost, "/sandboxes/" + id + "/reset", ""},
		{"ListSandboxRequests", http.MethodGet, "/sandboxes/" + id + "/requests", ""},
		{"AddSandboxFault", http.MethodPost, "/sandboxes/" + id + "/faults", `{"kind": "unavailable", "api": "pam", "count": 1}`},
		{"ListSandboxFaults", http.MethodGet, "/sandboxes/" + id + "/faults", ""},
		{"DeleteSandboxFault", http.MethodDelete, "/sandboxes/" + id + "/faults/flt-0000000000000000", ""},
		{"ClearSandboxFaults", http.MethodDelete, "/sandboxes/" + id + "/faults", ""},
		{"ListSandboxWebhooks", http.MethodGet, "/sandboxes/" + id + "/webhooks", ""},
		{"RedeliverSandboxWebhook", http.MethodPost, "/sandboxes/" + id + "/webhooks/00000000-0000-4000-8000-000000000000/redeliver", ""},
		{"TriggerInboundFax", http.MethodPost, "/sandboxes/" + id + "/triggers/inbound-fax", `{"pages": 1}`},
		{"CreateSandboxSnapshot", http.MethodPost, "/sandboxes/" + id + "/snapshots", `{"ttl": "1h"}`},
		{"ListSandboxSnapshots", http.MethodGet, "/sandboxes/" + id + "/snapshots", ""},
		{"GetSandboxSnapshot", http.MethodGet, "/sandboxes/" + id + "/snapshots/snp-0000000000000000", ""},
		{"DeleteSandboxSnapshot", http.MethodDelete, "/sandboxes/" + id + "/snapshots/snp-0000000000000000", ""},
		{"DeleteSandbox", http.MethodDelete, "/sandboxes/" + id, ""},
	}
}

// call sends op with token ("" for none) through a client that checks the
// answer against the spec, and answers its status and error body.
func (e *env) call(t *testing.T, token string, op operation) (*http.Response, sandboxapi.Error) {
	t.Helper()
	checked, err := contract.ForAPI(contract.Sandbox, nil, contract.WithoutRequestValidation(),
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	req := testkit.Request{Method: op.method, URL: e.urls[stack.Admin] + op.path, Token: token, Client: &http.Client{Transport: checked}}
	if op.body != "" {
		req.Body, req.ContentType = strings.NewReader(op.body), "application/json"
	}
	resp, body := req.Do(t)
	var answer sandboxapi.Error
	if resp.StatusCode >= 400 {
		require.NoError(t, json.Unmarshal(body, &answer), op.id)
	}
	return resp, answer
}

// sweepOperations calls every operation of the sandbox API on sandbox id
// with the admin token and checks each answers want in the API's error
// body, with Retry-After when want is 503.
func sweepOperations(t *testing.T, e *env, id string, want int, name sandboxapi.ErrorError) {
	t.Helper()
	for _, op := range operations(id) {
		resp, answer := e.call(t, e.st.AdminToken, op)
		assert.Equal(t, want, resp.StatusCode, "%s: %+v", op.id, answer)
		assert.Equal(t, name, answer.Error, op.id)
		if want == http.StatusServiceUnavailable {
			assert.Equal(t, apiserver.RetryAfterUnavailable, resp.Header.Get("Retry-After"), op.id)
			assert.Equal(t, apiserver.UnavailableMessage, answer.Message, op.id)
		}
	}
}

func TestEveryOperation_WhenTheDatabaseIsGoneAnswers503(t *testing.T) {
	e := start(t, envOptions{})
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	require.NoError(t, e.st.DB(stack.Sandbox).Close())
	sweepOperations(t, e, b.Id, http.StatusServiceUnavailable, sandboxapi.ErrorError(sandboxapi.UnavailableErrorErrorUnavailable))
}

func TestEveryOperation_WhenTheDatabaseFailsAnswers500(t *testing.T) {
	e := start(t, envOptions{})
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	testdb.DropTables(t, e.st.DB(stack.Sandbox))
	sweepOperations(t, e, b.Id, http.StatusInternalServerError, sandboxapi.ErrorErrorInternal)
}

// The answers every operation has besides its success: a malformed id is
// 400, no token 401, the creator's token 403 (on all but CreateSandbox); a
// body over the limit (1 MiB; the inbound-fax trigger's holds a document)
// is 413 and one that is not JSON 415.
func TestEveryOperation_RefusesBadIDsMissingTokensAndBadBodies(t *testing.T) {
	e := start(t, envOptions{})
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	for _, op := range operations(b.Id) {
		if op.id != "CreateSandbox" {
			resp, answer := e.call(t, e.st.AdminToken, operations("not-a-sandbox")[slices.IndexFunc(operations(b.Id), func(o operation) bool { return o.id == op.id })])
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %+v", op.id, answer)
			resp, answer = e.call(t, e.st.SandboxCreatorToken, op)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %+v", op.id, answer)
			unknown := operations("sbx-0000000000000000")[slices.IndexFunc(operations(b.Id), func(o operation) bool { return o.id == op.id })]
			resp, answer = e.call(t, e.st.AdminToken, unknown)
			if op.id == "ListSandboxSnapshots" {
				// The admin token lists a deleted sandbox's snapshots too:
				// an unknown one has none. A sandbox's token sees no other.
				assert.Equal(t, http.StatusOK, resp.StatusCode, "%s: %+v", op.id, answer)
				resp, answer = e.call(t, b.Token, unknown)
			}
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s: %+v", op.id, answer)
		}
		resp, answer := e.call(t, "", op)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s: %+v", op.id, answer)
		if op.body != "" {
			huge, limit := op, 1<<20
			if op.id == "TriggerInboundFax" {
				// Its body carries a document of up to 10 MiB, base64.
				limit = sandbox.MaxInboundDocument*4/3 + 2<<20
			}
			huge.body = `{"x": "` + strings.Repeat("x", limit) + `"}`
			resp, answer = e.call(t, e.st.AdminToken, huge)
			assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "%s: %+v", op.id, answer)
		}
	}
	for _, op := range operations(b.Id) {
		if !slices.Contains([]string{"CreateSandbox", "AdvanceSandboxClock", "AddSandboxFault", "CreateSandboxSnapshot"}, op.id) {
			continue
		}
		checked, err := contract.ForAPI(contract.Sandbox, nil, contract.WithoutRequestValidation())
		require.NoError(t, err)
		resp, _ := testkit.Request{Method: op.method, URL: e.urls[stack.Admin] + op.path, Token: e.st.AdminToken,
			Client: &http.Client{Transport: checked}}.Form(url.Values{"advance": {"1s"}}).Do(t)
		assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, op.id)
	}
	// Nothing of it changed the sandbox.
	got, err := e.admin.GetSandboxWithResponse(context.Background(), b.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, got.StatusCode())
}
