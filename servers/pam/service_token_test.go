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

// A stranger probing service_token learns nothing of which teams exist: an
// unknown team answers exactly as a real team with a wrong key does.
func TestIssueServiceToken_UnknownTeamAnswersAsAWrongKey(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	env.Team(t, "frozen")
	acme := env.ServiceUser(t, "acme", "bot", "pam_admin")
	frozen := env.ServiceUser(t, "frozen", "bot", "pam_admin")
	_, err := env.Server.SetTeamDisabled(context.Background(), "frozen", true)
	require.NoError(t, err)
	api := newAPI(t, env.URL)

	issue := func(team, keyID, secret string) *pamapi.IssueServiceTokenResponse {
		t.Helper()
		resp, err := api.IssueServiceTokenWithResponse(context.Background(), team,
			pamapi.IssueServiceTokenJSONRequestBody{KeyId: keyID, KeySecret: secret})
		require.NoError(t, err)
		return resp
	}
	wrongKey := issue("acme", acme.KeyID, "wrong-secret")
	require.Equal(t, http.StatusUnauthorized, wrongKey.StatusCode())
	require.NotNil(t, wrongKey.JSON401)

	for name, resp := range map[string]*pamapi.IssueServiceTokenResponse{
		"unknown team, unknown key":        issue("no-such-team", "key_unknown", "secret"),
		"unknown team, another team's key": issue("no-such-team", acme.KeyID, acme.KeySecret),
		"real team, unknown key":           issue("acme", "key_unknown", "secret"),
		"disabled team, wrong key":         issue("frozen", frozen.KeyID, "wrong-secret"),
		"disabled team, another's key":     issue("frozen", acme.KeyID, acme.KeySecret),
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode(), string(resp.Body))
			require.NotNil(t, resp.JSON401)
			assert.Equal(t, pamapi.ErrorNameAuthenticationError, resp.JSON401.Error)
			assert.Equal(t, wrongKey.JSON401.Message, resp.JSON401.Message)
			assert.NotContains(t, string(resp.Body), "team")
		})
	}

	// The disabled team is named to a caller who holds one of its keys.
	resp := issue("frozen", frozen.KeyID, frozen.KeySecret)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode())
	require.NotNil(t, resp.JSON403)
	assert.Equal(t, pamapi.ErrorNameDisabledTeam, resp.JSON403.Error)
	assert.Equal(t, http.StatusOK, issue("acme", acme.KeyID, acme.KeySecret).StatusCode())
}
