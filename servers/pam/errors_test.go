package pam_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/stalledbody"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func TestErrors_EachErrorOfTheTableIsProducedWhereItArises(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	ctx := context.Background()
	for _, team := range []string{"acme", "frozen", "broken"} {
		env.Team(t, team)
	}
	root := env.ServiceUser(t, "acme", "root", "pam_admin")
	viewer := env.ServiceUser(t, "acme", "viewer", "end_user")
	frozen := env.ServiceUser(t, "frozen", "root", "pam_admin")
	broken := env.ServiceUser(t, "broken", "root", "pam_admin")
	doomed := env.ServiceUser(t, "acme", "doomed", "pam_admin")
	// Bad input on purpose: the contract transport checks the answers only.
	api := newAPI(t, env.URL, contract.WithoutRequestValidation())
	rootTok := issueToken(t, api, "acme", root.KeyID, root.KeySecret)
	viewerTok := issueToken(t, api, "acme", viewer.KeyID, viewer.KeySecret)
	frozenTok := issueToken(t, api, "frozen", frozen.KeyID, frozen.KeySecret)
	brokenTok := issueToken(t, api, "broken", broken.KeyID, broken.KeySecret)
	doomedTok := issueToken(t, api, "acme", doomed.KeyID, doomed.KeySecret)

	tests := []struct {
		name    string
		status  int
		errName pamapi.ErrorName
		call    func(t *testing.T) (*http.Response, error)
	}{
		{"invalid_request: a body breaking the schema", 400, pamapi.ErrorNameInvalidRequest, func(t *testing.T) (*http.Response, error) {
			return api.CreateGroupWithBody(ctx, "acme", "application/json", strings.NewReader(`{"name":"no spaces allowed","roles":["root"]}`), bearer(rootTok))
		}},
		{"invalid_request: a key expiring in the past", 400, pamapi.ErrorNameInvalidRequest, func(t *testing.T) (*http.Response, error) {
			past := time.Now().Add(-time.Hour)
			return api.CreateServiceUserKey(ctx, "acme", "root", pamapi.CreateServiceUserKeyJSONRequestBody{ExpiresAt: &past}, bearer(rootTok))
		}},
		{"authentication_error: no token", 401, pamapi.ErrorNameAuthenticationError, func(t *testing.T) (*http.Response, error) {
			return api.ListUsers(ctx, "acme", nil)
		}},
		{"authorization_error: the token's key was deleted", 401, pamapi.ErrorNameAuthorizationError, func(t *testing.T) (*http.Response, error) {
			resp, err := api.DeleteServiceUserKeyWithResponse(ctx, "acme", "doomed", doomed.KeyID, bearer(rootTok))
			require.NoError(t, err)
			require.Equal(t, http.StatusNoContent, resp.StatusCode(), string(resp.Body))
			return api.ListUsers(ctx, "acme", nil, bearer(doomedTok))
		}},
		{"forbidden_error: a role that does not allow it", 403, pamapi.ErrorNameForbiddenError, func(t *testing.T) (*http.Response, error) {
			return api.ListUsers(ctx, "acme", nil, bearer(viewerTok))
		}},
		{"quota_exceeded: one group more than the quota", 403, pamapi.ErrorNameQuotaExceeded, func(t *testing.T) (*http.Response, error) {
			live := 3 // the root, viewer and doomed groups
			require.NoError(t, env.Operator.SetQuotas(ctx, "acme", pam.Quotas{Groups: &live}))
			t.Cleanup(func() { require.NoError(t, env.Operator.SetQuotas(ctx, "acme", pam.Quotas{})) })
			return api.CreateGroup(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "one-too-many", Roles: []pamapi.Role{}}, bearer(rootTok))
		}},
		{"disabled_team: the operator disabled the team", 403, pamapi.ErrorNameDisabledTeam, func(t *testing.T) (*http.Response, error) {
			_, err := env.Operator.SetTeamDisabled(ctx, "frozen", true)
			require.NoError(t, err)
			return api.ListGroups(ctx, "frozen", nil, bearer(frozenTok))
		}},
		{"resource_does_not_exist: an unknown group", 404, pamapi.ErrorNameResourceDoesNotExist, func(t *testing.T) (*http.Response, error) {
			return api.GetGroup(ctx, "acme", "no-such-group", bearer(rootTok))
		}},
		{"resource_already_exists: a taken group name", 409, pamapi.ErrorNameResourceAlreadyExists, func(t *testing.T) (*http.Response, error) {
			return api.CreateGroup(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "root-group", Roles: []pamapi.Role{}}, bearer(rootTok))
		}},
		{"resource_already_exists: a taken service user name", 409, pamapi.ErrorNameResourceAlreadyExists, func(t *testing.T) (*http.Response, error) {
			return api.CreateServiceUser(ctx, "acme", pamapi.CreateServiceUserJSONRequestBody{Name: "viewer"}, bearer(rootTok))
		}},
		{"unsupported_content_type: a form body", 415, pamapi.ErrorNameUnsupportedContentType, func(t *testing.T) (*http.Response, error) {
			return api.CreateGroupWithBody(ctx, "acme", "application/x-www-form-urlencoded", strings.NewReader(`name=x`), bearer(rootTok))
		}},
		{"unknown_error: a panic on a corrupt row", 500, pamapi.ErrorNameUnknownError, func(t *testing.T) (*http.Response, error) {
			_, err := env.DB.ExecContext(ctx, `INSERT INTO team_groups (id, team_id, name, roles, created_at)
				VALUES ('not-a-uuid', (SELECT id FROM teams WHERE name = 'broken'), 'corrupt', '', 0)`)
			require.NoError(t, err)
			return api.ListGroups(ctx, "broken", nil, bearer(brokenTok))
		}},
		{"service_offline: maintenance mode", 503, pamapi.ErrorNameServiceOffline, func(t *testing.T) (*http.Response, error) {
			require.NoError(t, env.Operator.SetOffline(context.Background(), true))
			t.Cleanup(func() { _ = env.Operator.SetOffline(context.Background(), false) })
			return api.ListGroups(ctx, "acme", nil, bearer(rootTok))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, err := testkit.ReadAnswer(tt.call(t))
			require.NoError(t, err)
			require.Equal(t, tt.status, code, string(body))
			e := decodeError(t, tt.status, body)
			assert.Equal(t, tt.errName, e.Error)
			assert.NotContains(t, string(body), "goroutine", "no stack trace reaches the caller")
			assert.NotContains(t, string(body), ".go:", "no source position reaches the caller")
		})
	}
}

func TestRateLimit_ABurstPastTheLimitGets429WithExactHeaders(t *testing.T) {
	start := time.Unix(1_000_000_000, 0)
	fake := clock.NewFake(start.Add(-3 * time.Second))
	env := pamtest.Start(t, pamtest.Options{Clock: fake, Settings: pam.Settings{RateLimit: 3, RateLimitPeriod: 3 * time.Second}})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot")
	api := newAPI(t, env.URL)
	tok := issueToken(t, api, "acme", key.KeyID, key.KeySecret) // spends one of the bot's requests
	fake.Set(start)                                             // a period later its bucket is full again

	type headers struct{ limit, remaining, reset, retryAt string }
	read := func(r *http.Response) headers {
		return headers{r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"),
			r.Header.Get("X-RateLimit-Reset"), r.Header.Get("X-RateLimit-Retry-At")}
	}
	want := []struct {
		status int
		h      headers
	}{
		{200, headers{"3", "2", "1000000001", "1000000000"}},
		{200, headers{"3", "1", "1000000002", "1000000000"}},
		{200, headers{"3", "0", "1000000003", "1000000001"}},
		{429, headers{"3", "0", "1000000003", "1000000001"}},
		{429, headers{"3", "0", "1000000003", "1000000001"}},
	}
	for i, w := range want {
		resp, err := api.GetCurrentUserWithResponse(context.Background(), "acme", bearer(tok))
		require.NoError(t, err)
		require.Equal(t, w.status, resp.StatusCode(), "request %d: %s", i, resp.Body)
		assert.Equal(t, w.h, read(resp.HTTPResponse), "request %d", i)
		if w.status == 429 {
			assert.Equal(t, pamapi.ErrorNameTooManyRequests, decodeError(t, 429, resp.Body).Error)
		}
	}
	fake.Advance(time.Second) // Retry-At: one request is allowed again
	resp, err := api.GetCurrentUserWithResponse(context.Background(), "acme", bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	assert.Equal(t, headers{"3", "0", "1000000004", "1000000002"}, read(resp.HTTPResponse))
}

func TestRateLimit_EachPrincipalHasItsOwnBucket(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{Clock: clock.NewFake(time.Now()), Settings: pam.Settings{RateLimit: 1, RateLimitPeriod: time.Hour}})
	env.Team(t, "acme")
	one := env.ServiceUser(t, "acme", "one")
	two := env.ServiceUser(t, "acme", "two")
	api := newAPI(t, env.URL)
	// Exchanging a key spends from its own user's bucket: each user's one
	// request of the hour goes to its exchange, not to another user's.
	tokOne := issueToken(t, api, "acme", one.KeyID, one.KeySecret)
	tokTwo := issueToken(t, api, "acme", two.KeyID, two.KeySecret)
	for _, tok := range []string{tokOne, tokTwo} {
		r, err := api.GetCurrentUserWithResponse(context.Background(), "acme", bearer(tok))
		require.NoError(t, err)
		assert.Equal(t, http.StatusTooManyRequests, r.StatusCode())
	}
	three := env.ServiceUser(t, "acme", "three")
	resp, err := api.IssueServiceTokenWithResponse(context.Background(), "acme",
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: three.KeyID, KeySecret: three.KeySecret})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode(), "the others' spent buckets do not touch a third user's")
}

// records is a slog.Handler keeping every record.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec.Clone())
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// statuses returns the status attribute of every "request" record.
func (r *records) statuses() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int64
	for _, rec := range r.list {
		if rec.Message != "request" {
			continue
		}
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "status" {
				out = append(out, a.Value.Int64())
			}
			return true
		})
	}
	return out
}

func TestClientClosedConnection_IsLoggedWith499(t *testing.T) {
	logs := &records{}
	env := pamtest.Start(t, pamtest.Options{Logger: slog.New(logs)})
	env.Team(t, "acme")
	_, _, tok := issueAdmin(t, env, "bot")

	// The caller is gone before the server reads the database.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/teams/acme/groups", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	env.Handler.ServeHTTP(httptest.NewRecorder(), req)

	assert.Contains(t, logs.statuses(), int64(499))
}

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
