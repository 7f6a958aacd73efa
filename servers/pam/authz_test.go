package pam_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/internal/rights"
	"github.com/apistack/apistack/servers/internal/rights/rightstest"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

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

// bodies are a valid request body per request schema, for the fixtures of
// suffix sfx. A request schema missing here fails the walk, naming it.
var bodies = map[string]func(sfx string) any{
	"CreateGroupRequest": func(sfx string) any {
		return pamapi.CreateGroupRequest{Name: "new-" + sfx, Roles: []pamapi.Role{pamapi.RoleSecurityAdmin}}
	},
	"UpdateGroupRequest":       func(string) any { return pamapi.UpdateGroupRequest{Roles: []pamapi.Role{pamapi.RoleResourceAdmin}} },
	"AddGroupMemberRequest":    func(sfx string) any { return pamapi.AddGroupMemberRequest{UserName: "alice-" + sfx} },
	"CreateServiceUserRequest": func(sfx string) any { return pamapi.CreateServiceUserRequest{Name: "made-" + sfx} },
	"UpdateServiceUserRequest": func(string) any {
		active := pamapi.UserStatusActive
		return pamapi.UpdateServiceUserRequest{Status: &active}
	},
	"CreateServiceUserKeyRequest": func(string) any { return pamapi.CreateServiceUserKeyRequest{} },
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// target fills op's path with the fixtures of suffix sfx in team: the group
// del- for a group's deletion, rm- with its member bob- for a membership,
// grp- otherwise; alice- as the user, svc- as the service user and its key.
// A path parameter missing here fails the walk, naming it.
func target(t *testing.T, op rightstest.Op, team, sfx, keyID string) string {
	t.Helper()
	membership := strings.Contains(op.Path, "/groups/{group_name}/users")
	return pathParam.ReplaceAllStringFunc(op.Path, func(m string) string {
		switch name := m[1 : len(m)-1]; {
		case name == "team_name":
			return team
		case name == "group_name" && membership:
			return "rm-" + sfx
		case name == "group_name" && op.Method == http.MethodDelete:
			return "del-" + sfx
		case name == "group_name":
			return "grp-" + sfx
		case name == "user_name" && membership:
			return "bob-" + sfx
		case name == "user_name" && strings.HasPrefix(op.Path, "/v1/teams/{team_name}/service_users"):
			return "svc-" + sfx
		case name == "user_name":
			return "alice-" + sfx
		case name == "key_id" && keyID == "":
			return "no-such-key"
		case name == "key_id":
			return keyID
		default:
			t.Fatalf("%s: the walk has no fixture for the path parameter %s", op.ID, name)
			return ""
		}
	})
}

// call makes op's request with token through a client that checks the
// answer against the spec, and returns the status and body.
func call(t *testing.T, client *http.Client, baseURL string, op rightstest.Op, team, sfx, keyID, token string) (int, []byte) {
	t.Helper()
	req := testkit.Request{Method: op.Method, URL: baseURL + target(t, op, team, sfx, keyID), Token: token, Client: client}
	if op.Body != "" {
		build, ok := bodies[op.Body]
		require.True(t, ok, "%s: the walk has no request body of schema %s", op.ID, op.Body)
		req = req.JSON(build(sfx))
	}
	resp, out := req.Do(t)
	return resp.StatusCode, out
}

// walkRights calls every operation of doc on the server at baseURL (the
// server env runs, or one on its database) once as a service user holding
// each role of the role table alone and once as one holding none, each
// on fixtures of its own, and checks the answer is what doc's
// x-apistack-roles says: a success, or 403 forbidden_error. It returns the
// status of each call by "operation/role".
func walkRights(t *testing.T, env *pamtest.Env, baseURL string, doc *openapi3.T) map[string]int {
	t.Helper()
	env.Team(t, "acme")
	rt, err := contract.ForAPI(contract.PAM, http.DefaultTransport, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	client := &http.Client{Transport: rt}
	api := newAPI(t, env.URL)
	callers := append([]string{""}, rightstest.Roles(t, doc, "bearerAuth")...)
	keyIDs, tokens := map[string]string{}, map[string]string{}
	for _, role := range callers {
		sfx := suffix(role)
		keyIDs[sfx] = fixtures(t, env, "acme", sfx)
		var roles []string
		if role != "" {
			roles = []string{role}
		}
		key := env.ServiceUser(t, "acme", "caller-"+sfx, roles...)
		tokens[role] = issueToken(t, api, "acme", key.KeyID, key.KeySecret)
	}
	ops := rightstest.Ops(t, doc)
	require.NotEmpty(t, ops)
	got := map[string]int{}
	for _, role := range callers {
		for _, op := range ops {
			t.Run(suffix(role)+"/"+op.ID, func(t *testing.T) {
				sfx := suffix(role)
				code, body := call(t, client, baseURL, op, "acme", sfx, keyIDs[sfx], tokens[role])
				got[op.ID+"/"+sfx] = code
				if op.MayCall(role) {
					assert.True(t, code >= 200 && code < 300, "%s with role %q: %d %s", op.ID, role, code, body)
					return
				}
				require.Equal(t, http.StatusForbidden, code, "%s with role %q: %s", op.ID, role, body)
				assert.Equal(t, pamapi.ErrorNameForbiddenError, decodeError(t, code, body).Error)
			})
		}
	}
	return got
}

// Every operation of the spec, called with every role of the role table
// alone (and with none), answers as the operation's x-apistack-roles says.
func TestRoles_EveryOperationAnswersEveryRoleAsTheSpecSays(t *testing.T) {
	doc, err := pamserver.GetSpec()
	require.NoError(t, err)
	env := pamtest.Start(t, pamtest.Options{})
	walkRights(t, env, env.URL, doc)
}

// The spec alone decides: with a role taken out of one operation's list
// (the spec edited in memory, the server built from the edited spec), that
// role's call of that operation answers 403, and every other call answers
// as before.
func TestRoles_ARoleTakenOutOfTheSpecIsRefused(t *testing.T) {
	const opID, role = "GetGroup", "security_admin"
	doc, err := pamserver.GetSpec()
	require.NoError(t, err)
	op := doc.Paths.Find("/v1/teams/{team_name}/groups/{group_name}").Get
	require.Equal(t, opID, op.OperationID)
	list := op.Extensions[rights.Extension].([]any)
	require.Contains(t, list, role, "the spec lets %s call %s", role, opID)
	op.Extensions[rights.Extension] = slices.DeleteFunc(slices.Clone(list), func(r any) bool { return r == role })

	table, err := rights.FromSpec(doc)
	require.NoError(t, err)
	env := pamtest.Start(t, pamtest.Options{})
	h, err := pam.HandlerWithRights(env.Server, table)
	require.NoError(t, err)
	edited := httptest.NewServer(h)
	t.Cleanup(edited.Close)

	got := walkRights(t, env, edited.URL, doc)
	assert.Equal(t, http.StatusForbidden, got[opID+"/"+role], "%s calling %s once the spec no longer lists it", role, opID)
	assert.Equal(t, http.StatusOK, got[opID+"/pam_admin"], "the other roles of the list still call it")
}

// A server refuses to start from a spec whose operation does not say who
// may call it.
func TestRoles_ASpecWithoutRightsDoesNotStart(t *testing.T) {
	doc, err := pamserver.GetSpec()
	require.NoError(t, err)
	delete(doc.Paths.Find("/v1/teams/{team_name}/groups").Post.Extensions, rights.Extension)
	_, err = rights.FromSpec(doc)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CreateGroup")
	assert.Contains(t, err.Error(), rights.Extension)
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
		code, body, err := testkit.ReadAnswer(call())
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
		"acme":  fixtures(t, env, "acme", "x"),
		"other": fixtures(t, env, "other", "x"),
	}
	doc, err := pamserver.GetSpec()
	require.NoError(t, err)
	rt, err := contract.ForAPI(contract.PAM, http.DefaultTransport, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	client := &http.Client{Transport: rt}
	acme := env.ServiceUser(t, "acme", "root", "pam_admin")
	acmeTok := issueToken(t, api, "acme", acme.KeyID, acme.KeySecret)
	other := env.ServiceUser(t, "other", "root", "pam_admin")
	otherTok := issueToken(t, api, "other", other.KeyID, other.KeySecret)

	before := snapshot(t, api, "other", "x", otherTok)
	for _, team := range []string{"other", "nosuchteam"} {
		for _, op := range rightstest.Ops(t, doc) {
			t.Run(team+"/"+op.ID, func(t *testing.T) {
				code, body := call(t, client, env.URL, op, team, "x", keyIDs[team], acmeTok)
				require.Equal(t, http.StatusForbidden, code, string(body))
				e := decodeError(t, code, body)
				assert.Equal(t, pamapi.ErrorNameForbiddenError, e.Error)
				assert.NotContains(t, string(body), "svc-x", "a refusal names nothing of the other team")
			})
		}
	}
	assert.Equal(t, before, snapshot(t, api, "other", "x", otherTok), "team other is unchanged")
	// The key of the other team cannot be deleted through acme's own path either.
	code, body, err := testkit.ReadAnswer(api.ClientInterface.DeleteServiceUserKey(ctx, "acme", "svc-x", keyIDs["other"], bearer(acmeTok)))
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, code, string(body))
	assert.Equal(t, before, snapshot(t, api, "other", "x", otherTok), "team other is unchanged")
}
