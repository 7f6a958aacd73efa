package pam_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// apiFrom returns a PAM client whose connections come from the loopback
// address ip (127.0.0.0/8 is all loopback), so a test can play several
// sources.
func apiFrom(t *testing.T, url, ip string) *pamapi.ClientWithResponses {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	base := &http.Transport{DialContext: dialer.DialContext}
	rt, err := contract.ForAPI(contract.PAM, base)
	require.NoError(t, err)
	api, err := pamapi.NewClientWithResponses(url, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	return api
}

func exchange(t *testing.T, api *pamapi.ClientWithResponses, team, keyID, secret string) (int, pamapi.ErrorName) {
	t.Helper()
	resp, err := api.IssueServiceTokenWithResponse(context.Background(), team,
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: keyID, KeySecret: secret})
	require.NoError(t, err)
	if resp.StatusCode() == http.StatusOK {
		return http.StatusOK, ""
	}
	return resp.StatusCode(), decodeError(t, resp.StatusCode(), resp.Body).Error
}

// Bogus exchanges used to share one bucket per team, so three a second kept
// every real key of the team at 429. Failures now count against their
// source: the attacker's source is refused, a valid key elsewhere is not.
func TestIssueServiceToken_AFloodOfBadExchangesLocksOutOnlyItsSource(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{Clock: clock.NewFake(time.Now())})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	attacker := apiFrom(t, env.URL, "127.0.0.2")
	user := apiFrom(t, env.URL, "127.0.0.1")

	statuses := map[int]int{}
	for i := range 40 {
		code, name := exchange(t, attacker, "acme", uuid.NewString(), fmt.Sprint("guess-", i))
		statuses[code]++
		if code == http.StatusTooManyRequests {
			assert.Equal(t, pamapi.ErrorNameTooManyRequests, name)
		}
		// The real key keeps working from its own address all along.
		if i%10 == 9 {
			code, _ := exchange(t, user, "acme", key.KeyID, key.KeySecret)
			assert.Equal(t, http.StatusOK, code, "after %d bogus exchanges", i+1)
		}
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: 20, http.StatusTooManyRequests: 20}, statuses,
		"20 failures per 10 minutes per source, then 429")
	code, _ := exchange(t, attacker, "acme", key.KeyID, key.KeySecret)
	assert.Equal(t, http.StatusTooManyRequests, code, "the flooding source is refused whatever it sends")
}

// A key id named by too many failures (from many sources) answers 429 to
// further wrong secrets, so its secret cannot be guessed at scale, while the
// real secret still gets a token.
func TestIssueServiceToken_WrongSecretsForOneKeyAreThrottledButItsSecretWorks(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{Clock: clock.NewFake(time.Now())})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	var last int
	for i := range 21 {
		api := apiFrom(t, env.URL, fmt.Sprintf("127.0.1.%d", i+1)) // one failure per source
		last, _ = exchange(t, api, "acme", key.KeyID, "wrong")
		if i < 20 {
			require.Equal(t, http.StatusUnauthorized, last, "failure %d", i+1)
		}
	}
	assert.Equal(t, http.StatusTooManyRequests, last, "the 21st wrong secret for the key id")
	code, _ := exchange(t, apiFrom(t, env.URL, "127.0.2.1"), "acme", key.KeyID, key.KeySecret)
	assert.Equal(t, http.StatusOK, code, "the real secret still works")
}

// A stranger probing service_token learns nothing of which teams exist: an
// unknown team answers exactly as a real team with a wrong key does.
func TestIssueServiceToken_UnknownTeamAnswersAsAWrongKey(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	env.Team(t, "frozen")
	acme := env.ServiceUser(t, "acme", "bot", "pam_admin")
	frozen := env.ServiceUser(t, "frozen", "bot", "pam_admin")
	_, err := env.Operator.SetTeamDisabled(context.Background(), "frozen", true)
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
