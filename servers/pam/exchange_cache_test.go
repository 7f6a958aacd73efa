package pam_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// A token exchange reads its key and team from a cache once the key was
// exchanged: the secret is still checked on every exchange, and deleting
// the key, disabling its user or the team ends its exchanges at once; every
// exchange that succeeds stores its token, concurrent ones included.
func TestIssueServiceToken_CachedKeyStillChecksSecretAndRevocation(t *testing.T) {
	ctx := context.Background()
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	api, admin := rootSession(t, env)
	worker := env.ServiceUser(t, "acme", "worker", "end_user")

	// The first exchange fills the cache; the ones after it are answered
	// from it, each with a token of its own, all of them stored.
	before := countTokens(t, env)
	const n = 16
	tokens := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { tokens[i] = issueToken(t, api, "acme", worker.KeyID, worker.KeySecret) })
	}
	wg.Wait()
	assert.Equal(t, before+n, countTokens(t, env), "every exchange stored its token before it answered")
	for _, tok := range tokens {
		code, _ := tokenStatus(t, api, tok)
		assert.Equal(t, http.StatusOK, code)
	}

	code, name := issueStatus(t, api, worker.KeyID, worker.KeySecret+"x")
	assert.Equal(t, http.StatusUnauthorized, code, "a wrong secret for a cached key")
	assert.Equal(t, pamapi.ErrorNameAuthenticationError, name)
	env.Team(t, "other")
	other, err := api.IssueServiceTokenWithResponse(ctx, "other", pamapi.IssueServiceTokenJSONRequestBody{KeyId: worker.KeyID, KeySecret: worker.KeySecret})
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, other.StatusCode(), "a cached key named with another team")

	// Disabled, then enabled again: refused while disabled.
	status := func(s pamapi.UserStatus) {
		resp, err := api.UpdateServiceUserWithResponse(ctx, "acme", "worker", pamapi.UpdateServiceUserJSONRequestBody{Status: &s}, admin)
		require.NoError(t, err)
		require.Equal(t, http.StatusNoContent, resp.StatusCode(), string(resp.Body))
	}
	status(pamapi.UserStatusDisabled)
	code, _ = issueStatus(t, api, worker.KeyID, worker.KeySecret)
	assert.Equal(t, http.StatusUnauthorized, code, "a disabled user's key issues no token")
	status(pamapi.UserStatusActive)
	issueToken(t, api, "acme", worker.KeyID, worker.KeySecret)

	// The team disabled: 403 at once.
	_, err = env.Operator.SetTeamDisabled(ctx, "acme", true)
	require.NoError(t, err)
	code, name = issueStatus(t, api, worker.KeyID, worker.KeySecret)
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, pamapi.ErrorNameDisabledTeam, name)
	_, err = env.Operator.SetTeamDisabled(ctx, "acme", false)
	require.NoError(t, err)
	issueToken(t, api, "acme", worker.KeyID, worker.KeySecret)

	// The key deleted: refused at once.
	del, err := api.DeleteServiceUserKeyWithResponse(ctx, "acme", "worker", worker.KeyID, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, del.StatusCode(), string(del.Body))
	code, name = issueStatus(t, api, worker.KeyID, worker.KeySecret)
	assert.Equal(t, http.StatusUnauthorized, code, "a deleted key issues no token")
	assert.Equal(t, pamapi.ErrorNameAuthenticationError, name)
}

// A key exchanged through one replica (so cached there) and deleted through
// another issues no token on the first once it heard the commit.
func TestReplicas_AKeyDeletedOnOneReplicaIssuesNoTokenOnAnother(t *testing.T) {
	ctx := context.Background()
	r := startAcmeReplicas(t, "end_user")
	b, apiA, apiB, worker, rootTok := r.b, r.apiA, r.apiB, r.worker, r.rootTok

	issueToken(t, apiB, "acme", worker.KeyID, worker.KeySecret)
	issueToken(t, apiB, "acme", worker.KeyID, worker.KeySecret)
	del, err := apiA.DeleteServiceUserKeyWithResponse(ctx, "acme", "worker", worker.KeyID, bearer(rootTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, del.StatusCode(), string(del.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	code, name := issueStatus(t, apiB, worker.KeyID, worker.KeySecret)
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, pamapi.ErrorNameAuthenticationError, name)
}
