package pam_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func TestLists_EveryListPagesLikeGroupsWithCountCarriedIntoEveryLink(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	root := env.ServiceUser(t, "acme", "root", "pam_admin")
	api := newAPI(t, env.URL)
	tok := issueToken(t, api, "acme", root.KeyID, root.KeySecret)
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
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
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
