package pam_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// A token's principal and roles are cached after its first use; every
// operator change that ends or narrows its access must take effect on the
// very next request all the same.
func TestAuthCache_OperatorRevocationsTakeEffectOnTheNextRequest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		revoke func(t *testing.T, env *pamtest.Env)
		status int
		error  pamapi.ErrorName
	}{
		{"tokens revoked", func(t *testing.T, env *pamtest.Env) {
			require.NoError(t, env.Operator.RevokeTokens(ctx, "acme"))
		}, http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError},
		{"team disabled", func(t *testing.T, env *pamtest.Env) {
			_, err := env.Operator.SetTeamDisabled(ctx, "acme", true)
			require.NoError(t, err)
		}, http.StatusForbidden, pamapi.ErrorNameDisabledTeam},
		{"roles of its group replaced", func(t *testing.T, env *pamtest.Env) {
			// Bootstrapping another user into the same group resets the
			// group's roles to the ones given: none.
			_, err := env.Operator.BootstrapServiceUser(ctx, "acme", "other", "root-group", []string{}, 0)
			require.NoError(t, err)
		}, http.StatusForbidden, pamapi.ErrorNameForbiddenError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := pamtest.Start(t, pamtest.Options{})
			env.Team(t, "acme")
			root := env.ServiceUser(t, "acme", "root", "pam_admin")
			api := newAPI(t, env.URL)
			tok := bearer(issueToken(t, api, "acme", root.KeyID, root.KeySecret))
			for range 3 { // cached after the first
				resp, err := api.ListGroupsWithResponse(ctx, "acme", nil, tok)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
			}
			tc.revoke(t, env)
			resp, err := api.ListGroupsWithResponse(ctx, "acme", nil, tok)
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode(), string(resp.Body))
			assert.Equal(t, tc.error, decodeError(t, resp.StatusCode(), resp.Body).Error)
		})
	}
}

// List pages are kept (rendered) between writes; every write, through the
// API or the operator's calls, is seen by the next list.
func TestListGroups_EveryWriteIsSeenByTheNextList(t *testing.T) {
	ctx := context.Background()
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	root := env.ServiceUser(t, "acme", "root", "pam_admin")
	api := newAPI(t, env.URL)
	tok := bearer(issueToken(t, api, "acme", root.KeyID, root.KeySecret))
	names := func() []string {
		resp, err := api.ListGroupsWithResponse(ctx, "acme", nil, tok)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		var out []string
		for _, g := range resp.JSON200.List {
			out = append(out, g.Name)
		}
		return out
	}
	assert.Equal(t, []string{"root-group"}, names())
	assert.Equal(t, []string{"root-group"}, names(), "read again from the cache")

	created, err := api.CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "api-made", Roles: []pamapi.Role{}}, tok)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	assert.Equal(t, []string{"api-made", "root-group"}, names())

	require.NoError(t, env.Operator.CreateTeamGroup(ctx, "acme", "operator-made", nil))
	assert.Equal(t, []string{"api-made", "operator-made", "root-group"}, names())

	deleted, err := api.DeleteGroupWithResponse(ctx, "acme", "api-made", tok)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, deleted.StatusCode(), string(deleted.Body))
	assert.Equal(t, []string{"operator-made", "root-group"}, names())
}
