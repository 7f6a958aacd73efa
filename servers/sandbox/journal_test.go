package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/stack"
)

// send makes one request with an Authorization header and answers its status.
func send(t *testing.T, method, url, auth, body string) int {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, r)
	require.NoError(t, err)
	req.Header.Set("Authorization", auth)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

// A request that breaks its API's spec is journaled with the violations
// found in it: where (query parameter, body pointer) and the rule; a
// request that keeps to it lists none.
func TestJournal_ListsTheSpecViolationsOfARequest(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	token, err := b.pam.Token(ctx)
	require.NoError(t, err)
	groups := b.Credentials.Pam.BaseUrl + "/v1/teams/" + b.Credentials.Pam.Team + "/groups"

	require.Equal(t, http.StatusBadRequest, send(t, http.MethodGet, groups+"?count=many&contains="+strings.Repeat("x", 300), "Bearer "+token, ""))
	require.Equal(t, http.StatusUnprocessableEntity, send(t, http.MethodPost, b.Credentials.Fax.BaseUrl+"/v2/faxes", "Bearer "+b.Credentials.Fax.ApiKey,
		fmt.Sprintf(`{"connection_id": %q, "to": 13125550800, "from": %q}`, b.Credentials.Fax.ConnectionId, b.Credentials.Fax.From)))
	require.Equal(t, http.StatusOK, send(t, http.MethodGet, groups, "Bearer "+token, ""))

	bad := journal(t, b, &sandboxapi.ListSandboxRequestsParams{Status: ptr(http.StatusBadRequest)})
	require.Len(t, bad, 1)
	list := bad[0]
	assert.Equal(t, "ListGroups", list.Operation)
	byName := map[string]sandboxapi.JournalViolation{}
	for _, v := range list.Violations {
		byName[v.Name] = v
	}
	require.Contains(t, byName, "count", "%+v", list.Violations)
	assert.Equal(t, sandboxapi.JournalViolationInQuery, byName["count"].In)
	assert.NotEmpty(t, byName["count"].Rule)
	require.Contains(t, byName, "contains", "%+v", list.Violations)
	assert.Contains(t, byName["contains"].Rule, "255")

	unprocessable := journal(t, b, &sandboxapi.ListSandboxRequestsParams{Status: ptr(http.StatusUnprocessableEntity)})
	require.Len(t, unprocessable, 1)
	sendFax := unprocessable[0]
	assert.Equal(t, "SendFax", sendFax.Operation)
	var where []string
	for _, v := range sendFax.Violations {
		assert.Equal(t, sandboxapi.JournalViolationInBody, v.In)
		assert.NotEmpty(t, v.Rule)
		where = append(where, v.Name)
	}
	assert.Contains(t, where, "/to", "%+v", sendFax.Violations)

	ok := journal(t, b, &sandboxapi.ListSandboxRequestsParams{Operation: ptr("ListGroups"), Status: ptr(http.StatusOK)})
	require.Len(t, ok, 1)
	assert.NotNil(t, ok[0].Violations)
	assert.Empty(t, ok[0].Violations)
}

// On PostgreSQL, the journal's commits are not announced to the other
// replicas (they cache nothing of the journal), so requests journaled
// through one replica leave the clock and fault caches of another alone;
// a fault set is announced.
func TestJournal_CommitsLeaveTheOtherReplicasCachesAlone(t *testing.T) {
	openDB := sharedOpenDB(t)
	first := start(t, envOptions{replica: &replicaOf{openDB: openDB, adminToken: "admin-token", creatorToken: "creator-token", masterKey: fixedKey}})
	second := start(t, envOptions{replica: &replicaOf{openDB: openDB, adminToken: "admin-token", creatorToken: "creator-token", masterKey: fixedKey}})
	ctx := context.Background()
	sb := first.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	pool := second.st.DB(stack.Sandbox)
	require.NoError(t, sqldb.Sync(ctx, pool))
	heard := sqldb.HeardOn(pool)
	for i := range 20 {
		_, err := sb.pam.CreateGroup(ctx, fmt.Sprintf("group-%02d", i))
		require.NoError(t, err)
		first.st.Sandboxes.Journal().Flush(ctx) // a commit each
	}
	require.NoError(t, sqldb.Sync(ctx, pool))
	assert.Equal(t, heard, sqldb.HeardOn(pool), "journal commits are not announced")
	require.Len(t, journal(t, sb, &sandboxapi.ListSandboxRequestsParams{Operation: ptr("CreateGroup")}), 20)

	addFault(t, sb, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindUnavailable, Api: apiOf("pam"), Count: ptr(1)})
	require.NoError(t, sqldb.Sync(ctx, pool))
	assert.Greater(t, sqldb.HeardOn(pool), heard, "a fault's change is")
}
