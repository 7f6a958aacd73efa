package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/servers/restaurant"
)

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

func TestImportRestaurantConfiguration_AValidDocumentIsImportedWhole(t *testing.T) {
	env := startRestaurantAdmin(t)
	ctx := context.Background()
	guid := env.newRestaurant(t, "Dockside")

	data, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: 7, Seed: 3}))
	require.NoError(t, err)
	var doc adminapi.RestaurantConfiguration
	require.NoError(t, json.Unmarshal(data, &doc))
	imported, err := env.api.ImportRestaurantConfigurationWithResponse(ctx, guid, doc)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, imported.StatusCode(), string(imported.Body))

	got, err := env.api.GetRestaurantWithResponse(ctx, guid)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	assert.Contains(t, string(got.Body), `"menuItems":7`, "the restaurant counts what was imported")
}

func TestGetFaxAccount_AnswersTheAccountCreated(t *testing.T) {
	env := startFax(t)
	ctx := context.Background()
	created := env.createAccount(t, "harbour")
	got, err := env.admin.GetFaxAccountWithResponse(ctx, "harbour")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	assert.Equal(t, created.Account.Id, got.JSON200.Id)
	assert.Equal(t, "harbour", got.JSON200.Name)
}
