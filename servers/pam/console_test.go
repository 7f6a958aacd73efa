package pam_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func TestConsoleTeams_GroupsUsersKeysTokensAndRateLimits(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	creds := env.ServiceUser(t, "acme", "bot", "pam_admin")
	api := apiFrom(t, env.URL, "127.0.0.1")

	teams, err := env.Server.Console().Teams(context.Background())
	require.NoError(t, err)
	require.Len(t, teams, 1)
	require.Len(t, teams[0].Users, 1)
	require.Len(t, teams[0].Users[0].Keys, 1)
	key := teams[0].Users[0].Keys[0]
	assert.Equal(t, creds.KeyID, key.ID)
	assert.Nil(t, key.LastUsedAt, "a key never exchanged was never used")
	assert.Zero(t, key.Tokens)
	before := teams[0].Users[0].RateLimit.Remaining

	for range 2 {
		status, _ := exchange(t, api, "acme", creds.KeyID, creds.KeySecret)
		require.Equal(t, http.StatusOK, status)
	}
	resp, err := api.IssueServiceTokenWithResponse(context.Background(), "acme",
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: creds.KeyID, KeySecret: creds.KeySecret})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	token := resp.JSON200.BearerToken
	groups, err := api.ListGroupsWithResponse(context.Background(), "acme", &pamapi.ListGroupsParams{},
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, groups.StatusCode())

	teams, err = env.Server.Console().Teams(context.Background())
	require.NoError(t, err)
	team := teams[0]
	assert.Equal(t, "acme", team.Name)
	require.Len(t, team.Groups, 1)
	assert.Equal(t, pam.ConsoleGroup{ID: team.Groups[0].ID, Name: creds.Group, Roles: creds.Roles, Members: []string{"bot"}}, team.Groups[0])
	user := team.Users[0]
	assert.Equal(t, "bot", user.Name)
	key = user.Keys[0]
	assert.Equal(t, 3, key.Tokens)
	assert.Equal(t, 3, key.LiveTokens)
	require.NotNil(t, key.LastUsedAt)
	assert.False(t, key.LastUsedAt.Before(key.CreatedAt))
	assert.Less(t, user.RateLimit.Remaining, before, "the list request spent from the user's bucket")
	assert.Positive(t, user.RateLimit.Limit)
}
