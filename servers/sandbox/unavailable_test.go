package sandbox_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/stack"
)

// sweepOperations calls every operation of the sandbox API on sandbox id
// with the admin token and checks each answers want in the API's error
// body, with Retry-After when want is 503. (The server checks each answer
// against the spec.)
func sweepOperations(t *testing.T, e *env, id string, want int, name sandboxapi.ErrorError) {
	t.Helper()
	for _, op := range []struct{ id, method, path, body string }{
		{"CreateSandbox", http.MethodPost, "/sandboxes", `{"clock": "frozen"}`},
		{"GetSandbox", http.MethodGet, "/sandboxes/" + id, ""},
		{"ResetSandbox", http.MethodPost, "/sandboxes/" + id + "/reset", ""},
		{"ListSandboxRequests", http.MethodGet, "/sandboxes/" + id + "/requests", ""},
		{"DeleteSandbox", http.MethodDelete, "/sandboxes/" + id, ""},
	} {
		var body io.Reader
		if op.body != "" {
			body = strings.NewReader(op.body)
		}
		req, err := http.NewRequestWithContext(context.Background(), op.method, e.urls[stack.Admin]+op.path, body)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+e.st.AdminToken)
		if op.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, op.id)
		var answer sandboxapi.Error
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer), op.id)
		require.NoError(t, resp.Body.Close())
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
	sweepOperations(t, e, b.Id, http.StatusServiceUnavailable, sandboxapi.ErrorErrorUnavailable)
}

func TestEveryOperation_WhenTheDatabaseFailsAnswers500(t *testing.T) {
	e := start(t, envOptions{})
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	testdb.DropTables(t, e.st.DB(stack.Sandbox))
	sweepOperations(t, e, b.Id, http.StatusInternalServerError, sandboxapi.ErrorErrorInternal)
}

// The answers every operation has besides its success: a malformed id is
// 400, no token 401, the creator's token 403, a body over 1 MiB 413.
func TestEveryOperation_RefusesBadIDsMissingTokensAndOversizedBodies(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	anonymous := e.client(t, "")
	for _, tc := range []struct {
		name string
		call func(c *sandboxapi.ClientWithResponses, id string) (int, error)
	}{
		{"GetSandbox", func(c *sandboxapi.ClientWithResponses, id string) (int, error) {
			r, err := c.GetSandboxWithResponse(ctx, id)
			return statusCode(r, err)
		}},
		{"ResetSandbox", func(c *sandboxapi.ClientWithResponses, id string) (int, error) {
			r, err := c.ResetSandboxWithResponse(ctx, id)
			return statusCode(r, err)
		}},
		{"ListSandboxRequests", func(c *sandboxapi.ClientWithResponses, id string) (int, error) {
			r, err := c.ListSandboxRequestsWithResponse(ctx, id, nil)
			return statusCode(r, err)
		}},
		{"DeleteSandbox", func(c *sandboxapi.ClientWithResponses, id string) (int, error) {
			r, err := c.DeleteSandboxWithResponse(ctx, id)
			return statusCode(r, err)
		}},
	} {
		for _, x := range []struct {
			client *sandboxapi.ClientWithResponses
			id     string
			want   int
		}{{e.admin, "not-a-sandbox", http.StatusBadRequest}, {anonymous, b.Id, http.StatusUnauthorized}, {e.creator, b.Id, http.StatusForbidden}} {
			got, err := tc.call(x.client, x.id)
			require.NoError(t, err, tc.name)
			assert.Equal(t, x.want, got, "%s %s", tc.name, x.id)
		}
	}
	created, err := anonymous.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{})
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, created.StatusCode(), string(created.Body))
	huge, err := e.creator.CreateSandboxWithBodyWithResponse(ctx, "application/json",
		strings.NewReader(`{"ttl": "1h", "x": "`+strings.Repeat("x", 1<<20)+`"}`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, huge.StatusCode(), string(huge.Body))
	// Nothing of it changed the sandbox.
	got, err := e.admin.GetSandboxWithResponse(ctx, b.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, got.StatusCode())
}

func statusCode(r interface{ StatusCode() int }, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return r.StatusCode(), nil
}
