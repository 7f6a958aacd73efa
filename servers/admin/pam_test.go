package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// start runs a PAM server and the admin API over it, and returns the PAM
// environment and an authenticated admin client validated against its spec.
func start(t *testing.T) (*pamtest.Env, *adminapi.ClientWithResponses) {
	t.Helper()
	env := pamtest.Start(t, pamtest.Options{})
	return env, adminOver(t, admin.Config{PAM: env.Operator})
}

// pamCall lists the team's users through the PAM API with a fresh pam_admin
// token and returns the status and error name.
func pamCall(t *testing.T, env *pamtest.Env, tok string, call func(api *pamapi.ClientWithResponses, auth pamapi.RequestEditorFn) (*http.Response, error)) (int, pamapi.ErrorName) {
	t.Helper()
	api, err := pamapi.NewClientWithResponses(env.URL, pamapi.WithHTTPClient(&http.Client{Transport: stacktest.Contract(t, contract.PAM)}))
	require.NoError(t, err)
	resp, err := call(api, func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+tok)
		return nil
	})
	require.NoError(t, err)
	defer resp.Body.Close()
	var e pamapi.Error
	if resp.StatusCode >= 400 {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		assert.Equal(t, resp.StatusCode, e.Code)
		assert.NotEmpty(t, e.Message)
	}
	return resp.StatusCode, e.Error
}

func token(t *testing.T, env *pamtest.Env) string {
	t.Helper()
	key := env.ServiceUser(t, "acme", "root", "pam_admin")
	api, err := pamapi.NewClientWithResponses(env.URL)
	require.NoError(t, err)
	resp, err := api.IssueServiceTokenWithResponse(context.Background(), "acme", pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.KeyID, KeySecret: key.KeySecret})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	return resp.JSON200.BearerToken
}

func listUsers(api *pamapi.ClientWithResponses, auth pamapi.RequestEditorFn) (*http.Response, error) {
	return api.ListUsers(context.Background(), "acme", nil, auth)
}

func TestSetPAMMaintenance_TakesThePAMAPIOfflineAndBack(t *testing.T) {
	env, c := start(t)
	env.Team(t, "acme")
	tok := token(t, env)
	ctx := context.Background()

	set := func(offline bool) {
		resp, err := c.SetPAMMaintenanceWithResponse(ctx, adminapi.SetPAMMaintenanceJSONRequestBody{Offline: offline})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		assert.Equal(t, offline, resp.JSON200.Offline)
		got, err := c.GetPAMMaintenanceWithResponse(ctx)
		require.NoError(t, err)
		assert.Equal(t, offline, got.JSON200.Offline)
	}
	set(true)
	code, name := pamCall(t, env, tok, listUsers)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, pamapi.ErrorNameServiceOffline, name)
	health, err := http.Get(env.URL + "/healthz")
	require.NoError(t, err)
	health.Body.Close()
	assert.Equal(t, http.StatusOK, health.StatusCode, "health still answers in maintenance")

	set(false)
	code, _ = pamCall(t, env, tok, listUsers)
	assert.Equal(t, http.StatusOK, code)
}

func TestSetPAMQuotas_LimitsWhatATeamCreates(t *testing.T) {
	env, c := start(t)
	env.Team(t, "acme")
	tok := token(t, env) // root, in root-group: one service user, one group, one key
	ctx := context.Background()

	one, zero := 1, 0
	resp, err := c.SetPAMQuotasWithResponse(ctx, "acme", adminapi.SetPAMQuotasJSONRequestBody{Groups: &one, ServiceUsers: &one, KeysPerServiceUser: &one})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	assert.Equal(t, adminapi.PAMQuotas{Groups: &one, ServiceUsers: &one, KeysPerServiceUser: &one}, *resp.JSON200)
	got, err := c.GetPAMQuotasWithResponse(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	assert.Equal(t, *resp.JSON200, *got.JSON200, "the quotas set are the quotas read")

	tests := []struct {
		name string
		call func(api *pamapi.ClientWithResponses, auth pamapi.RequestEditorFn) (*http.Response, error)
	}{
		{"groups", func(api *pamapi.ClientWithResponses, auth pamapi.RequestEditorFn) (*http.Response, error) {
			return api.CreateGroup(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "second", Roles: []pamapi.Role{}}, auth)
		}},
		{"service users", func(api *pamapi.ClientWithResponses, auth pamapi.RequestEditorFn) (*http.Response, error) {
			return api.CreateServiceUser(ctx, "acme", pamapi.CreateServiceUserJSONRequestBody{Name: "second"}, auth)
		}},
		{"keys per service user", func(api *pamapi.ClientWithResponses, auth pamapi.RequestEditorFn) (*http.Response, error) {
			return api.CreateServiceUserKey(ctx, "acme", "root", pamapi.CreateServiceUserKeyJSONRequestBody{}, auth)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, name := pamCall(t, env, tok, tt.call)
			assert.Equal(t, http.StatusForbidden, code)
			assert.Equal(t, pamapi.ErrorNameQuotaExceeded, name)
		})
	}

	// Lifting the quotas lets the creates through.
	resp, err = c.SetPAMQuotasWithResponse(ctx, "acme", adminapi.SetPAMQuotasJSONRequestBody{ServiceUsers: &zero})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	assert.Nil(t, resp.JSON200.Groups)
	code, _ := pamCall(t, env, tok, tests[0].call)
	assert.Equal(t, http.StatusCreated, code)
	code, name := pamCall(t, env, tok, tests[1].call)
	assert.Equal(t, http.StatusForbidden, code, "a zero quota allows none")
	assert.Equal(t, pamapi.ErrorNameQuotaExceeded, name)

	missing, err := c.GetPAMQuotasWithResponse(ctx, "nosuchteam")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, missing.StatusCode())
}

func TestCreatePAMHumanUser_AddsAHumanTheDirectoryShows(t *testing.T) {
	env, c := start(t)
	env.Team(t, "acme")
	tok := token(t, env)
	ctx := context.Background()

	resp, err := c.CreatePAMHumanUserWithResponse(ctx, "acme", adminapi.CreatePAMHumanUserJSONRequestBody{Name: "alice@example.com"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode(), string(resp.Body))
	assert.Equal(t, adminapi.PAMUserKindHuman, resp.JSON201.Kind)

	dup, err := c.CreatePAMHumanUserWithResponse(ctx, "acme", adminapi.CreatePAMHumanUserJSONRequestBody{Name: "alice@example.com"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, dup.StatusCode())
	missing, err := c.CreatePAMHumanUserWithResponse(ctx, "nosuchteam", adminapi.CreatePAMHumanUserJSONRequestBody{Name: "bob"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, missing.StatusCode())

	code, _ := pamCall(t, env, tok, func(api *pamapi.ClientWithResponses, auth pamapi.RequestEditorFn) (*http.Response, error) {
		return api.GetUser(ctx, "acme", "alice@example.com", auth)
	})
	assert.Equal(t, http.StatusOK, code)
}

func TestPAMTeams_CreateReadDisableAndBootstrapAServiceUser(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()

	created, err := c.CreatePAMTeamWithResponse(ctx, adminapi.CreatePAMTeamRequest{Name: "orbit"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	assert.Equal(t, "orbit", created.JSON201.Name)
	assert.False(t, created.JSON201.Disabled)
	again, err := c.CreatePAMTeamWithResponse(ctx, adminapi.CreatePAMTeamRequest{Name: "orbit"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, again.StatusCode(), "a team name is taken once")

	got, err := c.GetPAMTeamWithResponse(ctx, "orbit")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	assert.Equal(t, created.JSON201.Id, got.JSON200.Id)

	user, err := c.BootstrapPAMServiceUserWithResponse(ctx, "orbit", adminapi.BootstrapPAMServiceUserRequest{
		Name: "deployer", Group: "ops", Roles: []adminapi.PAMRole{"pam_admin"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, user.StatusCode(), string(user.Body))
	dup, err := c.BootstrapPAMServiceUserWithResponse(ctx, "orbit", adminapi.BootstrapPAMServiceUserRequest{
		Name: "deployer", Group: "ops", Roles: []adminapi.PAMRole{"pam_admin"}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, dup.StatusCode(), "a service user name is taken once per team")

	quotas, err := c.GetPAMQuotasWithResponse(ctx, "orbit")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, quotas.StatusCode(), string(quotas.Body))

	disabled := true
	updated, err := c.UpdatePAMTeamWithResponse(ctx, "orbit", adminapi.UpdatePAMTeamRequest{Disabled: &disabled})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, updated.StatusCode(), string(updated.Body))
	assert.True(t, updated.JSON200.Disabled)
	got, err = c.GetPAMTeamWithResponse(ctx, "orbit")
	require.NoError(t, err)
	assert.True(t, got.JSON200.Disabled, "the change is kept")
}
