package pam_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func TestSetQuotas_ARefusedReplacementChangesNoQuota(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	ctx := context.Background()
	groups, users, keys := 5, 3, 2
	before := pam.Quotas{Groups: &groups, ServiceUsers: &users, KeysPerServiceUser: &keys}
	require.NoError(t, env.Operator.SetQuotas(ctx, "acme", before))

	// The store refuses a negative quota; the other two values of the same
	// replacement must not be written either, whichever is written first.
	newGroups, bad, newKeys := 7, -1, 9
	for range 20 {
		err := env.Operator.SetQuotas(ctx, "acme", pam.Quotas{Groups: &newGroups, ServiceUsers: &bad, KeysPerServiceUser: &newKeys})
		require.Error(t, err)
		got, err := env.Operator.TeamQuotas(ctx, "acme")
		require.NoError(t, err)
		require.Equal(t, before, got, "a refused SetQuotas left part of its values behind")
	}

}

func TestSetOffline_SurvivesARestart(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, pamtest.Migrations)
	// Each server started on the database is the service restarted.
	open := func() *pam.Server {
		srv, err := pam.New(ctx, pam.Config{Deps: pam.Deps{DB: db}})
		require.NoError(t, err)
		return srv
	}

	first := open()
	assert.False(t, first.Operator().Offline())
	require.NoError(t, first.Operator().SetOffline(ctx, true))
	assert.True(t, open().Operator().Offline(), "a restarted server stays in maintenance")

	require.NoError(t, first.Operator().SetOffline(ctx, false))
	assert.False(t, open().Operator().Offline())
}

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

// A token's principal and roles are cached after its first use; every
// operator change that ends or narrows its access must take effect on the
// very next request all the same.
func TestAuthCache_OperatorRevocationsTakeEffectOnTheNextRequest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		revoke func(t *testing.T, env *pamtest.Env)
		status int
		error  pamapi.ErrorName
	}{
		{"tokens revoked", func(t *testing.T, env *pamtest.Env) {
			require.NoError(t, env.Operator.RevokeTokens(ctx, "acme"))
		}, http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError},
		{"team disabled", func(t *testing.T, env *pamtest.Env) {
			_, err := env.Operator.SetTeamDisabled(ctx, "acme", true)
			require.NoError(t, err)
		}, http.StatusForbidden, pamapi.ErrorNameDisabledTeam},
		{"roles of its group replaced", func(t *testing.T, env *pamtest.Env) {
			// Bootstrapping another user into the same group resets the
			// group's roles to the ones given: none.
			_, err := env.Operator.BootstrapServiceUser(ctx, "acme", "other", "root-group", []string{}, 0)
			require.NoError(t, err)
		}, http.StatusForbidden, pamapi.ErrorNameForbiddenError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := pamtest.Start(t, pamtest.Options{})
			env.Team(t, "acme")
			api, tok := rootSession(t, env)
			for range 3 { // cached after the first
				resp, err := api.ListGroupsWithResponse(ctx, "acme", nil, tok)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
			}
			tc.revoke(t, env)
			resp, err := api.ListGroupsWithResponse(ctx, "acme", nil, tok)
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode(), string(resp.Body))
			assert.Equal(t, tc.error, decodeError(t, resp.StatusCode(), resp.Body).Error)
		})
	}
}

// List pages are kept (rendered) between writes; every write, through the
// API or the operator's calls, is seen by the next list.
func TestListGroups_EveryWriteIsSeenByTheNextList(t *testing.T) {
	ctx := context.Background()
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	api, tok := rootSession(t, env)
	names := func() []string {
		resp, err := api.ListGroupsWithResponse(ctx, "acme", nil, tok)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		var out []string
		for _, g := range resp.JSON200.List {
			out = append(out, g.Name)
		}
		return out
	}
	assert.Equal(t, []string{"root-group"}, names())
	assert.Equal(t, []string{"root-group"}, names(), "read again from the cache")

	created, err := api.CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "api-made", Roles: []pamapi.Role{}}, tok)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	assert.Equal(t, []string{"api-made", "root-group"}, names())

	require.NoError(t, env.Operator.CreateTeamGroup(ctx, "acme", "operator-made", nil))
	assert.Equal(t, []string{"api-made", "operator-made", "root-group"}, names())

	deleted, err := api.DeleteGroupWithResponse(ctx, "acme", "api-made", tok)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, deleted.StatusCode(), string(deleted.Body))
	assert.Equal(t, []string{"operator-made", "root-group"}, names())
}

// Concurrent creates on one server, several racing for each name in three
// teams, one of them under a group quota: each name is created once, the
// quota is met exactly, and the other teams are not held to it (on
// PostgreSQL the creates are committed in batches holding several teams).
func TestCreateTeamGroup_ConcurrentCreatesKeepNamesAndQuotasExact(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	ctx := context.Background()
	teams := []string{"t0", "t1", "t2"}
	for _, team := range teams {
		env.Team(t, team)
	}
	quota := 5
	require.NoError(t, env.Operator.SetQuotas(ctx, "t0", pam.Quotas{Groups: &quota}))
	const creators, rounds = 48, 4
	var mu sync.Mutex
	created := map[string]int{}
	var others []error
	var wg sync.WaitGroup
	for c := range creators {
		wg.Go(func() {
			team := teams[c%len(teams)]
			for r := range rounds {
				// Two creators of each team race for each name.
				name := fmt.Sprintf("r%d-g%02d", r, c/len(teams)/2)
				err := env.Operator.CreateTeamGroup(ctx, team, name, nil)
				mu.Lock()
				switch {
				case err == nil:
					created[team+"/"+name]++
				case !errors.Is(err, storeerr.ErrAlreadyExists) && !strings.Contains(err.Error(), "quota of 5 groups exceeded"):
					others = append(others, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Empty(t, others, "every refusal is a taken name or the quota")
	perTeam := map[string]int{}
	for key, n := range created {
		assert.Equal(t, 1, n, "%s created once", key)
		perTeam[strings.SplitN(key, "/", 2)[0]]++
	}
	assert.Equal(t, map[string]int{"t0": quota, "t1": rounds * creators / len(teams) / 2, "t2": rounds * creators / len(teams) / 2}, perTeam)
}
