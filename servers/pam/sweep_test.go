package pam_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// sweepPAM sends one request to every operation declaring want (secured or
// not, as asked), built from the spec for team acme with the given token
// (none when empty), and asserts each is answered want; the middleware and
// the contract transport check every answer against the spec.
func sweepPAM(t *testing.T, env *pamtest.Env, want int, token string, secured bool) {
	t.Helper()
	doc, ops, err := contractcoverage.Operations("pam")
	require.NoError(t, err)
	rt, err := contract.ForAPI(contract.PAM, http.DefaultTransport, contract.WithoutRequestValidation(),
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	client := &http.Client{Transport: rt}
	swept := 0
	for _, op := range ops {
		if !op.Declares(want) || op.Secured(doc) != secured {
			continue
		}
		swept++
		req, err := op.NewRequest(env.URL, map[string]string{"team_name": "acme"}, `{"key_id":"k","key_secret":"s"}`)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		require.NoError(t, err, op.ID)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, "%s %s %s: %s", op.ID, req.Method, req.URL.Path, body)
	}
	assert.NotZero(t, swept, "some operation declares %d", want)
}

// adminToken starts a server with team acme and returns a pam_admin token.
func adminToken(t *testing.T, opts pamtest.Options) (*pamtest.Env, string) {
	t.Helper()
	env := pamtest.Start(t, opts)
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	api := newAPI(t, env.URL)
	tok, err := api.IssueServiceTokenWithResponse(context.Background(), "acme",
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.KeyID, KeySecret: key.KeySecret})
	require.NoError(t, err)
	require.NotNil(t, tok.JSON200, string(tok.Body))
	return env, tok.JSON200.BearerToken
}

func TestEveryOperation_WithoutATokenAnswers401(t *testing.T) {
	env, _ := adminToken(t, pamtest.Options{})
	sweepPAM(t, env, http.StatusUnauthorized, "", true)
}

func TestEveryOperation_InMaintenanceAnswers503(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	require.NoError(t, env.Server.SetOffline(context.Background(), true))
	sweepPAM(t, env, http.StatusServiceUnavailable, token, true)
	sweepPAM(t, env, http.StatusServiceUnavailable, "", false)
}

func TestEveryOperation_WhenTheDatabaseFailsAnswers500(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	require.NoError(t, env.DB.Close())
	sweepPAM(t, env, http.StatusInternalServerError, token, true)
	sweepPAM(t, env, http.StatusInternalServerError, "", false)
}
