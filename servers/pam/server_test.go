package pam_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// newAPI returns the generated client over protocol/contract, failing the
// test on any request or response that breaks the spec.
func newAPI(t *testing.T, baseURL string, opts ...contract.Option) *pamapi.ClientWithResponses {
	t.Helper()
	opts = append(opts, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	rt, err := contract.ForAPI(contract.PAM, http.DefaultTransport, opts...)
	require.NoError(t, err)
	c, err := pamapi.NewClientWithResponses(baseURL, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	return c
}

func bearer(token string) pamapi.RequestEditorFn {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

// issueToken exchanges a key for a token through the generated client.
func issueToken(t *testing.T, api *pamapi.ClientWithResponses, team, keyID, secret string) string {
	t.Helper()
	resp, err := api.IssueServiceTokenWithResponse(context.Background(), team,
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: keyID, KeySecret: secret})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	return resp.JSON200.BearerToken
}

// rootSession makes a pam_admin service user "root" of the team acme and
// returns a client checked against the spec and root's token.
func rootSession(t *testing.T, env *pamtest.Env) (*pamapi.ClientWithResponses, pamapi.RequestEditorFn) {
	t.Helper()
	api, _, tok := issueAdmin(t, env, "root")
	return api, bearer(tok)
}

// issueAdmin creates the pam_admin service user name in the team acme and
// returns a client of env's server (newAPI with opts), the user's key and a
// token issued for it.
func issueAdmin(t *testing.T, env *pamtest.Env, name string, opts ...contract.Option) (*pamapi.ClientWithResponses, pam.ServiceUserCredentials, string) {
	t.Helper()
	key := env.ServiceUser(t, "acme", name, "pam_admin")
	api := newAPI(t, env.URL, opts...)
	return api, key, issueToken(t, api, "acme", key.KeyID, key.KeySecret)
}

// decodeError reads the PAM error body and checks its shape.
func decodeError(t *testing.T, status int, body []byte) pamapi.Error {
	t.Helper()
	var e pamapi.Error
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	assert.Equal(t, status, e.Code)
	assert.NotEmpty(t, e.Message)
	assert.NotNil(t, e.ErrorCause)
	return e
}

func TestIssueServiceToken_ReturnsWorkingTokenForTheTeam(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{Settings: pam.Settings{TokenTTL: 10 * time.Minute}})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	api := newAPI(t, env.URL)

	before := time.Now()
	resp, err := api.IssueServiceTokenWithResponse(context.Background(), "acme",
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.KeyID, KeySecret: key.KeySecret})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	tok := resp.JSON200
	assert.Equal(t, "acme", tok.TeamName)
	assert.NotEmpty(t, tok.BearerToken)
	assert.WithinDuration(t, before.Add(10*time.Minute), tok.ExpiresAt, 5*time.Second)
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Retry-At"} {
		assert.NotEmpty(t, resp.HTTPResponse.Header.Get(h), h)
	}

	groups, err := api.ListGroupsWithResponse(context.Background(), "acme", nil, bearer(tok.BearerToken))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, groups.StatusCode(), string(groups.Body))
	require.Len(t, groups.JSON200.List, 1)
	assert.Equal(t, "bot-group", groups.JSON200.List[0].Name)
	assert.Equal(t, []pamapi.Role{pamapi.RolePamAdmin}, groups.JSON200.List[0].Roles)
	assert.Nil(t, groups.JSON200.List[0].DeletedAt)
}

func TestIssueServiceToken_RefusesBadKeysAndBodies(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	env.Team(t, "other")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	otherKey := env.ServiceUser(t, "other", "bot", "pam_admin")
	// Bad input on purpose: the contract transport checks responses only.
	api := newAPI(t, env.URL, contract.WithoutRequestValidation())

	tests := []struct {
		name        string
		team        string
		contentType string
		body        string
		status      int
		errName     pamapi.ErrorName
	}{
		{"wrong secret", "acme", "application/json", `{"key_id":"` + key.KeyID + `","key_secret":"nope"}`, 401, pamapi.ErrorNameAuthenticationError},
		{"unknown key id", "acme", "application/json", `{"key_id":"no-such-key","key_secret":"` + key.KeySecret + `"}`, 401, pamapi.ErrorNameAuthenticationError},
		{"key of another team", "acme", "application/json", `{"key_id":"` + otherKey.KeyID + `","key_secret":"` + otherKey.KeySecret + `"}`, 401, pamapi.ErrorNameAuthenticationError},
		{"unknown team: answered like a wrong secret, so team names cannot be probed", "nosuchteam", "application/json", `{"key_id":"` + key.KeyID + `","key_secret":"` + key.KeySecret + `"}`, 401, pamapi.ErrorNameAuthenticationError},
		{"body not JSON", "acme", "application/json", `key_id=x&key_secret=y`, 415, pamapi.ErrorNameUnsupportedContentType},
		{"body a JSON array", "acme", "application/json", `[1,2]`, 415, pamapi.ErrorNameUnsupportedContentType},
		{"body a JSON string", "acme", "application/json", `"key"`, 415, pamapi.ErrorNameUnsupportedContentType},
		{"duplicate key in body", "acme", "application/json", `{"key_id":"a","key_id":"b","key_secret":"c"}`, 400, pamapi.ErrorNameInvalidRequest},
		{"wrong content type", "acme", "text/plain", `{"key_id":"` + key.KeyID + `","key_secret":"` + key.KeySecret + `"}`, 415, pamapi.ErrorNameUnsupportedContentType},
		{"form content type", "acme", "application/x-www-form-urlencoded", `key_id=x&key_secret=y`, 415, pamapi.ErrorNameUnsupportedContentType},
		{"missing key_secret", "acme", "application/json", `{"key_id":"x"}`, 400, pamapi.ErrorNameInvalidRequest},
		{"unknown field", "acme", "application/json", `{"key_id":"x","key_secret":"y","KEY_ID":"z"}`, 400, pamapi.ErrorNameInvalidRequest},
		{"empty body", "acme", "application/json", ``, 400, pamapi.ErrorNameInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tokensBefore := countTokens(t, env)
			resp, err := api.IssueServiceTokenWithBodyWithResponse(context.Background(), tt.team, tt.contentType, strings.NewReader(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode(), string(resp.Body))
			e := decodeError(t, tt.status, resp.Body)
			assert.Equal(t, tt.errName, e.Error)
			assert.Equal(t, tokensBefore, countTokens(t, env), "a refused request must not issue a token")
		})
	}
}

// countTokens counts the tokens issued so far, through the server's own
// bookkeeping of requests: every 200 of service_token is one token.
func countTokens(t *testing.T, env *pamtest.Env) int {
	t.Helper()
	n, err := env.Operator.TokenCount(context.Background())
	require.NoError(t, err)
	return n
}

func TestIssueServiceToken_DisabledTeamIsRefused(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	api, key, tok := issueAdmin(t, env, "bot")
	_, err := env.Operator.SetTeamDisabled(context.Background(), "acme", true)
	require.NoError(t, err)

	resp, err := api.IssueServiceTokenWithResponse(context.Background(), "acme",
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.KeyID, KeySecret: key.KeySecret})
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode())
	assert.Equal(t, pamapi.ErrorNameDisabledTeam, decodeError(t, 403, resp.Body).Error)

	list, err := api.ListGroupsWithResponse(context.Background(), "acme", nil, bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, list.StatusCode())
	assert.Equal(t, pamapi.ErrorNameDisabledTeam, decodeError(t, 403, list.Body).Error)
}

func TestListGroups_RefusesBadTokens(t *testing.T) {
	fake := clock.NewFake(time.Now())
	env := pamtest.Start(t, pamtest.Options{Clock: fake, Settings: pam.Settings{TokenTTL: time.Hour}})
	env.Team(t, "acme")
	env.Team(t, "other")
	api, key, valid := issueAdmin(t, env, "bot", contract.WithoutRequestValidation())
	expiring := issueToken(t, api, "acme", key.KeyID, key.KeySecret)

	tests := []struct {
		name    string
		header  string
		team    string
		advance time.Duration
		status  int
		errName pamapi.ErrorName
	}{
		{"missing", "", "acme", 0, 401, pamapi.ErrorNameAuthenticationError},
		{"malformed scheme", "Basic " + valid, "acme", 0, 401, pamapi.ErrorNameAuthenticationError},
		{"malformed no token", "Bearer ", "acme", 0, 401, pamapi.ErrorNameAuthenticationError},
		{"malformed two words", "Bearer a b", "acme", 0, 401, pamapi.ErrorNameAuthenticationError},
		{"unknown", "Bearer pat_doesnotexist", "acme", 0, 401, pamapi.ErrorNameAuthenticationError},
		{"other team's path", "Bearer " + valid, "other", 0, 403, pamapi.ErrorNameForbiddenError},
		{"unknown team's path", "Bearer " + valid, "nosuchteam", 0, 403, pamapi.ErrorNameForbiddenError},
		{"expired", "Bearer " + expiring, "acme", 2 * time.Hour, 401, pamapi.ErrorNameAuthenticationError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.Advance(tt.advance)
			resp, err := api.ListGroupsWithResponse(context.Background(), tt.team, nil,
				func(_ context.Context, r *http.Request) error {
					if tt.header != "" {
						r.Header.Set("Authorization", tt.header)
					}
					return nil
				})
			require.NoError(t, err)
			require.Equal(t, tt.status, resp.StatusCode(), string(resp.Body))
			assert.Equal(t, tt.errName, decodeError(t, tt.status, resp.Body).Error)
			assert.Empty(t, decodeError(t, tt.status, resp.Body).ErrorCause, "a refused token has no causes: error_cause locates what breaks the schema")
			assert.NotEmpty(t, resp.HTTPResponse.Header.Get("X-RateLimit-Remaining"))
		})
	}
}

func TestListGroups_RefusesBadPaginationParameters(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	api, _, tok := issueAdmin(t, env, "bot", contract.WithoutRequestValidation())

	// A real offset, issued for another filter, must not be accepted either.
	env.Groups(t, "acme", "g", 3)
	one := 1
	page, err := api.ListGroupsWithResponse(context.Background(), "acme", &pamapi.ListGroupsParams{Count: &one}, bearer(tok))
	require.NoError(t, err)
	next := linkParam(t, page.HTTPResponse, "next", "offset")

	for _, query := range []string{
		"count=0", "count=-1", "count=1001", "count=abc", "count=1.5",
		"offset=never-issued", "offset=" + url.QueryEscape(next+"x"),
		"offset=" + url.QueryEscape(next) + "&contains=g",
		"include_deleted=maybe",
	} {
		t.Run(query, func(t *testing.T) {
			resp, body := testkit.Request{Method: http.MethodGet, URL: env.URL + "/v1/teams/acme/groups?" + query, Token: tok}.Do(t)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
			e := decodeError(t, 400, body)
			assert.Equal(t, pamapi.ErrorNameInvalidRequest, e.Error)
			require.NotEmpty(t, e.ErrorCause)
			assert.Equal(t, pamapi.ErrorCauseLocationTypeQuery, e.ErrorCause[0].LocationType)
		})
	}
}

func TestListGroups_PagesCarryCountAndPrevLinks(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	names := append([]string{"bot-group"}, env.Groups(t, "acme", "g", 24)...)
	api := newAPI(t, env.URL)
	tok := issueToken(t, api, "acme", key.KeyID, key.KeySecret)

	count := 7
	var seen []string
	var pages []*http.Response
	resp, err := api.ListGroupsWithResponse(context.Background(), "acme", &pamapi.ListGroupsParams{Count: &count}, bearer(tok))
	for {
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		assert.LessOrEqual(t, len(resp.JSON200.List), count)
		for _, g := range resp.JSON200.List {
			seen = append(seen, g.Name)
		}
		pages = append(pages, resp.HTTPResponse)
		if len(pages) == 1 {
			assert.Empty(t, linkParam(t, resp.HTTPResponse, "prev", "count"), "the first page has no prev link")
		} else {
			assert.Equal(t, "7", linkParam(t, resp.HTTPResponse, "prev", "count"), "prev link carries count")
		}
		offset := linkParam(t, resp.HTTPResponse, "next", "offset")
		if offset == "" {
			break
		}
		assert.Equal(t, "7", linkParam(t, resp.HTTPResponse, "next", "count"), "next link carries count")
		resp, err = api.ListGroupsWithResponse(context.Background(), "acme", &pamapi.ListGroupsParams{Count: &count, Offset: &offset}, bearer(tok))
	}
	assert.Equal(t, slices.Sorted(slices.Values(names)), seen)
	assert.Len(t, pages, 4)

	// Following prev from the last page walks back to the first.
	var back []string
	prev := linkParam(t, pages[len(pages)-1], "prev", "offset")
	for prev != "" {
		resp, err := api.ListGroupsWithResponse(context.Background(), "acme", &pamapi.ListGroupsParams{Count: &count, Offset: &prev}, bearer(tok))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		var page []string
		for _, g := range resp.JSON200.List {
			page = append(page, g.Name)
		}
		back = append(page, back...)
		prev = linkParam(t, resp.HTTPResponse, "prev", "offset")
	}
	assert.Equal(t, seen[:21], back)
}

func TestListGroups_FiltersByNameAndDeletion(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	env.Groups(t, "acme", "ops", 3)
	env.Groups(t, "acme", "dev", 2)
	api := newAPI(t, env.URL)
	tok := issueToken(t, api, "acme", key.KeyID, key.KeySecret)

	contains := "OPS"
	resp, err := api.ListGroupsWithResponse(context.Background(), "acme", &pamapi.ListGroupsParams{Contains: &contains}, bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	var names []string
	for _, g := range resp.JSON200.List {
		names = append(names, g.Name)
	}
	assert.Equal(t, []string{"ops-0000", "ops-0001", "ops-0002"}, names)
}

// The server exports the generated handlers, Handler and its operator's and
// console's views only: what the admin API, the console and the tests need
// goes through those views, so the server's own methods stay free to change
// without another package coming to depend on them.
func TestServer_ExportsItsHandlersAndLifecycleOnly(t *testing.T) {
	testkit.ExportsOnly(t, &pam.Server{}, (*pamserver.StrictServerInterface)(nil), "Handler", "Operator", "Console")
}

func TestServer_ServesHealthSpecAndDocs(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	for path, want := range map[string]string{
		"/healthz":      `"ok"`,
		"/openapi.yaml": "IssueServiceToken",
		"/docs/":        "<html",
	} {
		resp, err := http.Get(env.URL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, strings.ToLower(string(body)), strings.ToLower(want), path)
	}
}

// linkParam returns a query parameter of the rel link of resp, or "".
func linkParam(t *testing.T, resp *http.Response, rel, param string) string {
	t.Helper()
	for _, part := range strings.Split(resp.Header.Get("Link"), ",") {
		part = strings.TrimSpace(part)
		if !strings.HasSuffix(part, fmt.Sprintf(`rel="%s"`, rel)) {
			continue
		}
		raw := part[strings.Index(part, "<")+1 : strings.Index(part, ">")]
		u, err := url.Parse(raw)
		require.NoError(t, err)
		return u.Query().Get(param)
	}
	return ""
}

func TestLists_EveryListPagesLikeGroupsWithCountCarriedIntoEveryLink(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	api, _, tok := issueAdmin(t, env, "root")
	ctx := context.Background()
	require.NoError(t, env.Operator.CreateTeamGroup(ctx, "acme", "big", nil))
	for i := range 5 {
		name := fmt.Sprintf("human-%d", i)
		env.HumanUser(t, "acme", name)
		require.NoError(t, env.Operator.AddMember(ctx, "acme", "big", name))
		env.ServiceUser(t, "acme", fmt.Sprintf("svc-%d", i))
	}
	for range 4 {
		_, _, _, err := env.Operator.IssueKey(ctx, "acme", "root", 0)
		require.NoError(t, err)
	}

	lists := []struct {
		path string
		want int
	}{
		{"/v1/teams/acme/groups", 7},                      // root-group, big, svc-N-group
		{"/v1/teams/acme/groups/big/users", 5},            // the humans
		{"/v1/teams/acme/users", 11},                      // root, 5 humans, 5 service users
		{"/v1/teams/acme/users?kind=human", 5},            // a filter carried into the links
		{"/v1/teams/acme/service_users", 6},               // root and the 5
		{"/v1/teams/acme/service_users/root/keys", 5},     // the bootstrap key and 4 more
		{"/v1/teams/acme/roles", 6},                       // the six roles
		{"/v1/teams/acme/service_users?contains=svc-", 5}, // another filter
	}
	for _, l := range lists {
		t.Run(l.path, func(t *testing.T) {
			var names []string
			next := env.URL + l.path
			sep := "?"
			if u, _ := url.Parse(l.path); u.RawQuery != "" {
				sep = "&"
			}
			next += sep + "count=2"
			pages := 0
			for next != "" {
				resp, body := get(t, next, tok)
				var page struct {
					List []map[string]any `json:"list"`
				}
				require.NoError(t, json.Unmarshal(body, &page))
				assert.LessOrEqual(t, len(page.List), 2)
				for _, it := range page.List {
					id, ok := it["name"]
					if !ok {
						id = it["id"]
					}
					names = append(names, fmt.Sprint(id))
				}
				pages++
				next = ""
				if linkParam(t, resp, "next", "offset") != "" {
					assert.Equal(t, "2", linkParam(t, resp, "next", "count"), "count is carried")
					next = linkURL(t, resp, "next")
				}
				if pages > 1 {
					assert.Equal(t, "2", linkParam(t, resp, "prev", "count"), "a later page links back")
				}
				require.Less(t, pages, 20)
			}
			assert.Len(t, names, l.want)
			for i := 1; i < len(names); i++ {
				assert.Less(t, names[i-1], names[i], "ordered, each once")
			}
		})
	}

	// An offset of one list is refused by another.
	two := 2
	users, err := api.ListUsersWithResponse(ctx, "acme", &pamapi.ListUsersParams{Count: &two}, bearer(tok))
	require.NoError(t, err)
	off := linkParam(t, users.HTTPResponse, "next", "offset")
	require.NotEmpty(t, off)
	svc, err := api.ListServiceUsersWithResponse(ctx, "acme", &pamapi.ListServiceUsersParams{Count: &two, Offset: &off}, bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, svc.StatusCode())
	assert.Equal(t, pamapi.ErrorNameInvalidRequest, decodeError(t, 400, svc.Body).Error)
}

// get fetches url with tok and fails the test unless it answers 200.
func get(t *testing.T, url, tok string) (*http.Response, []byte) {
	t.Helper()
	resp, body := testkit.Request{Method: http.MethodGet, URL: url, Token: tok}.Do(t)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	return resp, body
}

// linkURL returns the URL of the rel link of resp, or "".
func linkURL(t *testing.T, resp *http.Response, rel string) string {
	t.Helper()
	for _, part := range strings.Split(resp.Header.Get("Link"), ",") {
		part = strings.TrimSpace(part)
		if strings.HasSuffix(part, `rel="`+rel+`"`) {
			return part[strings.Index(part, "<")+1 : strings.Index(part, ">")]
		}
	}
	return ""
}

// groupsPage lists one page of the acme groups whose name contains "grp-".
func groupsPage(t *testing.T, api *pamapi.ClientWithResponses, tok string, offset string) (*pamapi.ListGroupsResponse, []string) {
	t.Helper()
	two, contains := 2, "grp-"
	p := &pamapi.ListGroupsParams{Count: &two, Contains: &contains}
	if offset != "" {
		p.Offset = &offset
	}
	resp, err := api.ListGroupsWithResponse(context.Background(), "acme", p, bearer(tok))
	require.NoError(t, err)
	require.NotNil(t, resp.JSON200, string(resp.Body))
	var names []string
	for _, g := range resp.JSON200.List {
		names = append(names, g.Name)
	}
	return resp, names
}

func pagingFixture(t *testing.T) (*pamapi.ClientWithResponses, string) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	root := env.ServiceUser(t, "acme", "root", "pam_admin")
	for _, g := range []string{"grp-a", "grp-b", "grp-c", "grp-d"} {
		require.NoError(t, env.Operator.CreateTeamGroup(context.Background(), "acme", g, nil))
	}
	api := newAPI(t, env.URL)
	return api, issueToken(t, api, "acme", root.KeyID, root.KeySecret)
}

func deleteGroups(t *testing.T, api *pamapi.ClientWithResponses, tok string, names ...string) {
	for _, n := range names {
		resp, err := api.DeleteGroupWithResponse(context.Background(), "acme", n, bearer(tok))
		require.NoError(t, err)
		require.Equal(t, 204, resp.StatusCode(), string(resp.Body))
	}
}

func TestListGroups_AnEmptyPreviousPageStillLinksToWhatFollows(t *testing.T) {
	api, tok := pagingFixture(t)
	first, names := groupsPage(t, api, tok, "")
	require.Equal(t, []string{"grp-a", "grp-b"}, names)
	second, names := groupsPage(t, api, tok, linkParam(t, first.HTTPResponse, "next", "offset"))
	require.Equal(t, []string{"grp-c", "grp-d"}, names)

	// Everything before the second page goes away; going back finds nothing,
	// but the way forward must not be lost.
	deleteGroups(t, api, tok, "grp-a", "grp-b")
	back, names := groupsPage(t, api, tok, linkParam(t, second.HTTPResponse, "prev", "offset"))
	assert.Empty(t, names)
	require.Contains(t, back.HTTPResponse.Header.Get("Link"), `rel="next"`, "an empty previous page must link onwards")
	_, names = groupsPage(t, api, tok, linkParam(t, back.HTTPResponse, "next", "offset"))
	assert.Equal(t, []string{"grp-c", "grp-d"}, names)
}

func TestListGroups_AnEmptyNextPageLinksBackToEveryItemBeforeIt(t *testing.T) {
	api, tok := pagingFixture(t)
	first, names := groupsPage(t, api, tok, "")
	require.Equal(t, []string{"grp-a", "grp-b"}, names)

	// Everything after the first page goes away; the next page is empty and
	// its previous page must hold the first page whole (grp-b included).
	deleteGroups(t, api, tok, "grp-c", "grp-d")
	next, names := groupsPage(t, api, tok, linkParam(t, first.HTTPResponse, "next", "offset"))
	assert.Empty(t, names)
	assert.NotContains(t, next.HTTPResponse.Header.Get("Link"), `rel="next"`)
	_, names = groupsPage(t, api, tok, linkParam(t, next.HTTPResponse, "prev", "offset"))
	assert.Equal(t, []string{"grp-a", "grp-b"}, names)
}
