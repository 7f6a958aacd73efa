package pam_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// operation is one PAM operation called on a team with fixtures named after
// a suffix, so each caller works on objects of its own.
type operation struct {
	name string
	// needs is the least the operation needs: "member", "read" or "manage".
	needs string
	call  func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, auth pamapi.RequestEditorFn) (int, []byte, error)
}

// fixtures creates what the operations of suffix sfx work on in team:
// groups grp-, del-, rm- (with bob-sfx in rm-), a human alice-sfx, bob-sfx,
// and a service user svc-sfx with one key, whose id it returns.
func fixtures(t *testing.T, env *pamtest.Env, team, sfx string) string {
	t.Helper()
	ctx := context.Background()
	for _, g := range []string{"grp-", "del-", "rm-"} {
		require.NoError(t, env.Operator.CreateTeamGroup(ctx, team, g+sfx, []string{"end_user"}))
	}
	env.HumanUser(t, team, "alice-"+sfx)
	env.HumanUser(t, team, "bob-"+sfx)
	env.ServiceUser(t, team, "svc-"+sfx)
	keyID, _, _, err := env.Operator.IssueKey(ctx, team, "svc-"+sfx, 0)
	require.NoError(t, err)
	require.NoError(t, env.Operator.AddMember(ctx, team, "rm-"+sfx, "bob-"+sfx))
	return keyID
}

func operations(keyIDs map[string]string) []operation {
	return []operation{
		{"GetCurrentUser", "member", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.GetCurrentUser(ctx, team, a))
		}},
		{"ListRoles", "member", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.ListRoles(ctx, team, nil, a))
		}},
		{"ListGroups", "read", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.ListGroups(ctx, team, nil, a))
		}},
		{"GetGroup", "read", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.GetGroup(ctx, team, "grp-"+sfx, a))
		}},
		{"ListGroupMembers", "read", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.ListGroupMembers(ctx, team, "rm-"+sfx, nil, a))
		}},
		{"ListUsers", "read", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.ListUsers(ctx, team, nil, a))
		}},
		{"GetUser", "read", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.GetUser(ctx, team, "alice-"+sfx, a))
		}},
		{"ListServiceUsers", "read", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.ListServiceUsers(ctx, team, nil, a))
		}},
		{"GetServiceUser", "read", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.GetServiceUser(ctx, team, "svc-"+sfx, a))
		}},
		{"ListServiceUserKeys", "read", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.ListServiceUserKeys(ctx, team, "svc-"+sfx, nil, a))
		}},
		{"CreateGroup", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.CreateGroup(ctx, team, pamapi.CreateGroupJSONRequestBody{Name: "new-" + sfx, Roles: []pamapi.Role{pamapi.RoleSecurityAdmin}}, a))
		}},
		{"UpdateGroup", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.UpdateGroup(ctx, team, "grp-"+sfx, pamapi.UpdateGroupJSONRequestBody{Roles: []pamapi.Role{pamapi.RoleResourceAdmin}}, a))
		}},
		{"AddGroupMember", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.AddGroupMember(ctx, team, "grp-"+sfx, pamapi.AddGroupMemberJSONRequestBody{UserName: "alice-" + sfx}, a))
		}},
		{"RemoveGroupMember", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.RemoveGroupMember(ctx, team, "rm-"+sfx, "bob-"+sfx, a))
		}},
		{"DeleteGroup", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.DeleteGroup(ctx, team, "del-"+sfx, a))
		}},
		{"CreateServiceUser", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.CreateServiceUser(ctx, team, pamapi.CreateServiceUserJSONRequestBody{Name: "made-" + sfx}, a))
		}},
		{"UpdateServiceUser", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			active := pamapi.UserStatusActive
			return do(api.ClientInterface.UpdateServiceUser(ctx, team, "svc-"+sfx, pamapi.UpdateServiceUserJSONRequestBody{Status: &active}, a))
		}},
		{"CreateServiceUserKey", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			return do(api.ClientInterface.CreateServiceUserKey(ctx, team, "svc-"+sfx, pamapi.CreateServiceUserKeyJSONRequestBody{}, a))
		}},
		{"DeleteServiceUserKey", "manage", func(ctx context.Context, api *pamapi.ClientWithResponses, team, sfx string, a pamapi.RequestEditorFn) (int, []byte, error) {
			keyID, ok := keyIDs[team+"/"+sfx]
			if !ok {
				keyID = "no-such-key"
			}
			return do(api.ClientInterface.DeleteServiceUserKey(ctx, team, "svc-"+sfx, keyID, a))
		}},
	}
}

// do returns the status and body of an answer.
func do(resp *http.Response, err error) (int, []byte, error) {
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

func TestRoles_EachRoleAllowsExactlyWhatTheRoleTableSays(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	api := newAPI(t, env.URL)
	ctx := context.Background()

	readers := []string{"pam_admin", "resource_admin", "delegated_resource_admin", "security_admin", "delegated_security_admin"}
	allowed := map[string][]string{
		"member": append([]string{"", "end_user"}, readers...),
		"read":   readers,
		"manage": {"pam_admin"},
	}
	callers := append([]string{"", "end_user"}, readers...)
	keyIDs := map[string]string{}
	tokens := map[string]string{}
	for _, role := range callers {
		sfx := suffix(role)
		keyIDs["acme/"+sfx] = fixtures(t, env, "acme", sfx)
		var roles []string
		if role != "" {
			roles = []string{role}
		}
		key := env.ServiceUser(t, "acme", "caller-"+sfx, roles...)
		tokens[role] = issueToken(t, api, "acme", key.KeyID, key.KeySecret)
	}

	for _, role := range callers {
		for _, op := range operations(keyIDs) {
			t.Run(suffix(role)+"/"+op.name, func(t *testing.T) {
				code, body, err := op.call(ctx, api, "acme", suffix(role), bearer(tokens[role]))
				require.NoError(t, err)
				if slices.Contains(allowed[op.needs], role) {
					assert.True(t, code >= 200 && code < 300, "%s with role %q: %d %s", op.name, role, code, body)
					return
				}
				require.Equal(t, http.StatusForbidden, code, string(body))
				assert.Equal(t, pamapi.ErrorNameForbiddenError, decodeError(t, code, body).Error)
			})
		}
	}
}

func suffix(role string) string {
	if role == "" {
		return "none"
	}
	return role
}

// snapshot is everything of a team the API shows, as raw answers.
func snapshot(t *testing.T, api *pamapi.ClientWithResponses, team, sfx, tok string) []string {
	t.Helper()
	ctx := context.Background()
	yes := true
	calls := []func() (*http.Response, error){
		func() (*http.Response, error) {
			return api.ClientInterface.ListGroups(ctx, team, &pamapi.ListGroupsParams{IncludeDeleted: &yes}, bearer(tok))
		},
		func() (*http.Response, error) { return api.ClientInterface.ListUsers(ctx, team, nil, bearer(tok)) },
		func() (*http.Response, error) {
			return api.ClientInterface.ListServiceUsers(ctx, team, nil, bearer(tok))
		},
		func() (*http.Response, error) {
			return api.ClientInterface.ListServiceUserKeys(ctx, team, "svc-"+sfx, nil, bearer(tok))
		},
		func() (*http.Response, error) {
			return api.ClientInterface.ListGroupMembers(ctx, team, "rm-"+sfx, nil, bearer(tok))
		},
		func() (*http.Response, error) {
			return api.ClientInterface.ListGroupMembers(ctx, team, "grp-"+sfx, nil, bearer(tok))
		},
	}
	var out []string
	for _, call := range calls {
		code, body, err := do(call())
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code, string(body))
		out = append(out, string(body))
	}
	return out
}

func TestIsolation_ATokenOfOneTeamReadsAndChangesNothingOfAnother(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	env.Team(t, "other")
	api := newAPI(t, env.URL)
	ctx := context.Background()
	// Both teams hold objects of the same names, so a lookup that forgot the
	// team would find one.
	keyIDs := map[string]string{
		"acme/x":  fixtures(t, env, "acme", "x"),
		"other/x": fixtures(t, env, "other", "x"),
	}
	acme := env.ServiceUser(t, "acme", "root", "pam_admin")
	acmeTok := issueToken(t, api, "acme", acme.KeyID, acme.KeySecret)
	other := env.ServiceUser(t, "other", "root", "pam_admin")
	otherTok := issueToken(t, api, "other", other.KeyID, other.KeySecret)

	before := snapshot(t, api, "other", "x", otherTok)
	for _, team := range []string{"other", "nosuchteam"} {
		for _, op := range operations(keyIDs) {
			t.Run(team+"/"+op.name, func(t *testing.T) {
				code, body, err := op.call(ctx, api, team, "x", bearer(acmeTok))
				require.NoError(t, err)
				require.Equal(t, http.StatusForbidden, code, string(body))
				e := decodeError(t, code, body)
				assert.Equal(t, pamapi.ErrorNameForbiddenError, e.Error)
				assert.NotContains(t, string(body), "svc-x", "a refusal names nothing of the other team")
			})
		}
	}
	assert.Equal(t, before, snapshot(t, api, "other", "x", otherTok), "team other is unchanged")
	// The key of the other team cannot be deleted through acme's own path either.
	code, body, err := do(api.ClientInterface.DeleteServiceUserKey(ctx, "acme", "svc-x", keyIDs["other/x"], bearer(acmeTok)))
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, code, string(body))
	assert.Equal(t, before, snapshot(t, api, "other", "x", otherTok), "team other is unchanged")
}
