package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/internal/rights"
	"github.com/apistack/apistack/servers/internal/rights/rightstest"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/sandbox"
)

// sandboxBodies are a valid request body per request schema. A request
// schema missing here fails the walk, naming it.
var sandboxBodies = map[string]any{
	"CreateSandboxRequest":  sandboxapi.CreateSandboxRequest{},
	"FaultRequest":          sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindUnavailable, Api: apiOf("pam"), Count: ptr(1)},
	"ClockChange":           sandboxapi.ClockChange{Advance: ptr("0s")},
	"InboundFaxRequest":     sandboxapi.InboundFaxRequest{},
	"CreateSnapshotRequest": sandboxapi.CreateSnapshotRequest{},
}

// sandboxPathValues fill the path parameters other than the sandbox's id
// (ids of the right form that name nothing). A parameter missing here fails
// the walk, naming it.
var sandboxPathValues = map[string]string{
	"event_id":    "7c6c3a4e-0f4b-4e0e-9d1e-2f1f4b8b5e01",
	"fault_id":    "flt-0123456789abcdef",
	"snapshot_id": "snp-0123456789abcdef",
}

// Every operation of the sandbox spec, called with each kind of token of the
// role table, answers as its x-apistack-roles says: a kind it lists gets
// past the authorization (what it gets then depends on the sandbox), any
// other answers 403 forbidden. Each kind works on a sandbox of its own (the
// sandbox token on its own sandbox), and the deletion comes last.
func TestRights_EveryOperationAnswersEveryTokenAsTheSpecSays(t *testing.T) {
	e := start(t, envOptions{})
	doc, err := sandboxserver.GetSpec()
	require.NoError(t, err)
	kinds := rightstest.Roles(t, doc, "sandboxToken")
	require.Equal(t, []string{"admin", "sandbox", "sandbox_creator"}, kinds)
	ops := rightstest.Ops(t, doc)
	// The deletion last, so the other calls find the sandbox.
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].ID != "DeleteSandbox" && ops[j].ID == "DeleteSandbox" })

	checked, err := contract.ForAPI(contract.Sandbox, nil, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	client := &http.Client{Transport: checked}
	own := e.create(t, sandboxapi.CreateSandboxRequest{})
	tokens := map[string]string{"admin": e.st.AdminToken, "sandbox_creator": e.st.SandboxCreatorToken, "sandbox": own.Token}
	param := regexp.MustCompile(`\{([a-z_]+)\}`)
	for _, kind := range kinds {
		// Each kind on a sandbox of its own; the sandbox token on its own.
		target := own
		if kind != "sandbox" {
			target = e.create(t, sandboxapi.CreateSandboxRequest{})
		}
		for _, o := range ops {
			t.Run(kind+"/"+o.ID, func(t *testing.T) {
				path := param.ReplaceAllStringFunc(o.Path, func(m string) string {
					name := m[1 : len(m)-1]
					if name == "id" {
						return target.Id
					}
					v, ok := sandboxPathValues[name]
					require.True(t, ok, "%s: the walk has no value for the path parameter %s", o.ID, name)
					return v
				})
				req := testkit.Request{Method: o.Method, URL: e.urls["admin"] + path, Token: tokens[kind], Client: client}
				if o.Body != "" {
					v, ok := sandboxBodies[o.Body]
					require.True(t, ok, "%s: the walk has no request body of schema %s", o.ID, o.Body)
					req = req.JSON(v)
				}
				resp, out := req.Do(t)
				if o.MayCall(kind) {
					assert.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, resp.StatusCode, "%s with the %s token: %s", o.ID, kind, out)
					assert.Less(t, resp.StatusCode, 500, "%s with the %s token: %s", o.ID, kind, out)
					return
				}
				require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s with the %s token: %s", o.ID, kind, out)
				var answer sandboxapi.Error
				require.NoError(t, json.Unmarshal(out, &answer), string(out))
				assert.Equal(t, sandboxapi.ErrorErrorForbidden, answer.Error)
				assert.Contains(t, answer.Message, o.ID)
			})
		}
	}
}

// The spec alone decides: with the sandbox token taken out of one
// operation's list (the spec edited in memory, the handler built from the
// edited spec), that token's call answers 403, while the admin token's
// still passes, and the real handler still lets the sandbox token in.
func TestRights_ATokenTakenOutOfTheSpecIsRefused(t *testing.T) {
	e := start(t, envOptions{})
	own := e.create(t, sandboxapi.CreateSandboxRequest{})
	doc, err := sandboxserver.GetSpec()
	require.NoError(t, err)
	op := doc.Paths.Find("/sandboxes/{id}/clock").Get
	require.Equal(t, "GetSandboxClock", op.OperationID)
	require.Equal(t, []any{"admin", "sandbox"}, op.Extensions[rights.Extension])
	op.Extensions[rights.Extension] = []any{"admin"}
	table, err := rights.FromSpec(doc)
	require.NoError(t, err)
	h, err := sandbox.HandlerWithRights(e.st.Sandboxes, table)
	require.NoError(t, err)
	edited := httptest.NewServer(h)
	t.Cleanup(edited.Close)

	get := func(base, token string) (int, []byte) {
		resp, body := testkit.Request{Method: http.MethodGet, URL: base + "/sandboxes/" + own.Id + "/clock", Token: token}.Do(t)
		return resp.StatusCode, body
	}
	code, body := get(edited.URL, own.Token)
	require.Equal(t, http.StatusForbidden, code, string(body))
	var answer sandboxapi.Error
	require.NoError(t, json.Unmarshal(body, &answer))
	assert.Equal(t, sandboxapi.ErrorErrorForbidden, answer.Error)
	code, body = get(edited.URL, e.st.AdminToken)
	assert.Equal(t, http.StatusOK, code, string(body))
	code, body = get(e.urls["admin"], own.Token)
	assert.Equal(t, http.StatusOK, code, "the spec as shipped lets the sandbox token read its clock: %s", body)
}
