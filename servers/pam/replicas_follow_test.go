package pam_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// A token exchange through one replica is announced to no other (no cache
// holds a token's absence), a group create is (lists must show it), and
// what changes a cached token or roles is seen by the other replica as soon
// as it heard the commit: a member added to a new group widens its roles
// there, a disabled user's token is refused there. (That a group create
// leaves the other replica's tokens and roles cached, BenchmarkReplicaWrites
// shows in the statements per create.)
func TestReplicas_ExchangesAndCreatesKeepTheOtherReplicasAuthCaches(t *testing.T) {
	ctx := context.Background()
	r := startAcmeReplicas(t, "end_user")
	b, apiA, apiB, worker, rootTok := r.b, r.apiA, r.apiB, r.worker, r.rootTok
	workerTok := issueToken(t, apiA, "acme", worker.KeyID, worker.KeySecret)
	require.NoError(t, sqldb.Sync(ctx, b.DB))

	// B reads the worker's token and roles once: an end user may not list
	// groups.
	resp, err := apiB.ListGroupsWithResponse(ctx, "acme", nil, bearer(workerTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode(), string(resp.Body))

	// Exchanges on A are heard by nobody.
	heard := sqldb.HeardOn(b.DB)
	for range 5 {
		issueToken(t, apiA, "acme", worker.KeyID, worker.KeySecret)
	}
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	assert.Equal(t, heard, sqldb.HeardOn(b.DB), "a token exchange is not announced")

	// A group created on A is heard by B; the worker's roles are as they
	// were (the group has no members yet).
	created, err := apiA.CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "admins", Roles: []pamapi.Role{pamapi.RolePamAdmin}}, bearer(rootTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	assert.Equal(t, heard+1, sqldb.HeardOn(b.DB), "a group create is announced")
	resp, err = apiB.ListGroupsWithResponse(ctx, "acme", nil, bearer(workerTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode(), string(resp.Body))

	// The worker joins the new group on A: B lets it list the groups once
	// it heard the commit, and the list shows the group.
	added, err := apiA.AddGroupMemberWithResponse(ctx, "acme", "admins", pamapi.AddGroupMemberJSONRequestBody{UserName: "worker"}, bearer(rootTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, added.StatusCode(), string(added.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	resp, err = apiB.ListGroupsWithResponse(ctx, "acme", nil, bearer(workerTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	var names []string
	for _, g := range resp.JSON200.List {
		names = append(names, g.Name)
	}
	assert.Contains(t, names, "admins")

	// The worker disabled on A: B refuses its token once it heard.
	disabled := pamapi.UserStatus("disabled")
	upd, err := apiA.UpdateServiceUserWithResponse(ctx, "acme", "worker", pamapi.UpdateServiceUserJSONRequestBody{Status: &disabled}, bearer(rootTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, upd.StatusCode(), string(upd.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	me, err := apiB.GetCurrentUserWithResponse(ctx, "acme", bearer(workerTok))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, me.StatusCode(), string(me.Body))
}
