package pam_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/servers/internal/stalledbody"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// TestEveryBody_ThatStallsIs408InvalidRequest sends every operation that
// takes a body, as the team's pam_admin (the token issue with its own key in
// the body), a body that stalls past the read timeout: each is answered
// 408 invalid_request in PAM's error body, checked against the spec.
func TestEveryBody_ThatStallsIs408InvalidRequest(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	root := env.ServiceUser(t, "acme", "root", "pam_admin")
	env.ServiceUser(t, "acme", "bot")
	api, err := pamapi.NewClientWithResponses(env.URL)
	require.NoError(t, err)
	issued, err := api.IssueServiceTokenWithResponse(t.Context(), "acme",
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: root.KeyID, KeySecret: root.KeySecret})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, issued.StatusCode(), string(issued.Body))
	stalledbody.Run(t, stalledbody.Target{
		Spec:       pamserver.GetSpec,
		Handler:    env.Server.Handler,
		PathValues: map[string]string{"team_name": "acme", "group_name": "bot-group", "user_name": "bot"},
		Authorize: func(_ *testing.T, op stalledbody.Operation, req *http.Request) {
			if op.ID != "IssueServiceToken" {
				req.Header.Set("Authorization", "Bearer "+issued.JSON200.BearerToken)
			}
		},
		CheckBody: func(t *testing.T, _ stalledbody.Operation, _ http.Header, body []byte) {
			e := stalledbody.DecodeJSON[pamapi.Error](t, body)
			assert.Equal(t, http.StatusRequestTimeout, e.Code)
			assert.Equal(t, pamapi.ErrorNameInvalidRequest, e.Error)
			assert.NotEmpty(t, e.Message)
		},
	})
}
