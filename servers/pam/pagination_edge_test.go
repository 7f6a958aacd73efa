package pam_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

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
		require.NoError(t, env.Server.CreateTeamGroup(context.Background(), "acme", g, nil))
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
