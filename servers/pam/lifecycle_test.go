package pam_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// tokenStatus calls GetCurrentUser with tok and returns the status and, for
// an error, its name.
func tokenStatus(t *testing.T, api *pamapi.ClientWithResponses, tok string) (int, pamapi.ErrorName) {
	t.Helper()
	resp, err := api.GetCurrentUserWithResponse(context.Background(), "acme", bearer(tok))
	require.NoError(t, err)
	if resp.StatusCode() == http.StatusOK {
		return http.StatusOK, ""
	}
	return resp.StatusCode(), decodeError(t, resp.StatusCode(), resp.Body).Error
}

// issueStatus exchanges a key and returns the status and, for an error, its name.
func issueStatus(t *testing.T, api *pamapi.ClientWithResponses, keyID, secret string) (int, pamapi.ErrorName) {
	t.Helper()
	resp, err := api.IssueServiceTokenWithResponse(context.Background(), "acme", pamapi.IssueServiceTokenJSONRequestBody{KeyId: keyID, KeySecret: secret})
	require.NoError(t, err)
	if resp.StatusCode() == http.StatusOK {
		return http.StatusOK, ""
	}
	return resp.StatusCode(), decodeError(t, resp.StatusCode(), resp.Body).Error
}

func TestKeys_RotateDeleteExpireAndDisableEndAccessAsDesigned(t *testing.T) {
	fake := clock.NewFake(time.Now())
	env := pamtest.Start(t, pamtest.Options{Clock: fake, Settings: pam.Settings{TokenTTL: time.Hour}})
	env.Team(t, "acme")
	api, admin := rootSession(t, env)
	ctx := context.Background()

	created, err := api.CreateServiceUserWithResponse(ctx, "acme", pamapi.CreateServiceUserJSONRequestBody{Name: "worker"}, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	assert.Equal(t, pamapi.UserStatusActive, created.JSON201.Status)

	newKey := func(expires *time.Time) pamapi.ServiceUserKeySecret {
		resp, err := api.CreateServiceUserKeyWithResponse(ctx, "acme", "worker", pamapi.CreateServiceUserKeyJSONRequestBody{ExpiresAt: expires}, admin)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, resp.StatusCode(), string(resp.Body))
		require.NotEmpty(t, resp.JSON201.KeySecret)
		return *resp.JSON201
	}
	listKeys := func() ([]string, string) {
		resp, err := api.ListServiceUserKeysWithResponse(ctx, "acme", "worker", nil, admin)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		var ids []string
		for _, k := range resp.JSON200.List {
			ids = append(ids, k.Id)
		}
		return ids, string(resp.Body)
	}

	k1 := newKey(nil)
	tok1 := issueToken(t, api, "acme", k1.Id, k1.KeySecret)
	code, _ := tokenStatus(t, api, tok1)
	require.Equal(t, http.StatusOK, code)
	ids, raw := listKeys()
	assert.Equal(t, []string{k1.Id}, ids)
	assert.NotContains(t, raw, k1.KeySecret, "a list never shows a secret")

	t.Run("rotating: a new key, then the old one deleted", func(t *testing.T) {
		k2 := newKey(nil)
		tok2 := issueToken(t, api, "acme", k2.Id, k2.KeySecret)
		del, err := api.DeleteServiceUserKeyWithResponse(ctx, "acme", "worker", k1.Id, admin)
		require.NoError(t, err)
		require.Equal(t, http.StatusNoContent, del.StatusCode(), string(del.Body))

		code, name := tokenStatus(t, api, tok1)
		assert.Equal(t, http.StatusUnauthorized, code)
		assert.Equal(t, pamapi.ErrorNameAuthorizationError, name, "a deleted key's tokens lose their access")
		code, name = issueStatus(t, api, k1.Id, k1.KeySecret)
		assert.Equal(t, http.StatusUnauthorized, code)
		assert.Equal(t, pamapi.ErrorNameAuthenticationError, name, "a deleted key issues no token")
		code, _ = tokenStatus(t, api, tok2)
		assert.Equal(t, http.StatusOK, code, "the new key's token keeps working")
		ids, _ := listKeys()
		assert.Equal(t, []string{k2.Id}, ids)

		again, err := api.DeleteServiceUserKeyWithResponse(ctx, "acme", "worker", k1.Id, admin)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, again.StatusCode(), "a key is deleted once")
	})

	t.Run("expiring: a key past its expiry issues no token, and its tokens end with it", func(t *testing.T) {
		expires := fake.Now().Add(10 * time.Minute).Truncate(time.Second)
		k3 := newKey(&expires)
		resp, err := api.IssueServiceTokenWithResponse(ctx, "acme", pamapi.IssueServiceTokenJSONRequestBody{KeyId: k3.Id, KeySecret: k3.KeySecret})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode())
		assert.True(t, resp.JSON200.ExpiresAt.Equal(expires), "a token never outlives its key: %s", resp.JSON200.ExpiresAt)

		fake.Advance(11 * time.Minute)
		code, name := tokenStatus(t, api, resp.JSON200.BearerToken)
		assert.Equal(t, http.StatusUnauthorized, code)
		assert.Equal(t, pamapi.ErrorNameAuthenticationError, name)
		code, name = issueStatus(t, api, k3.Id, k3.KeySecret)
		assert.Equal(t, http.StatusUnauthorized, code)
		assert.Equal(t, pamapi.ErrorNameAuthenticationError, name)
	})

	t.Run("disabling: the user's tokens end for good, its keys issue none until enabled", func(t *testing.T) {
		k4 := newKey(nil)
		tok4 := issueToken(t, api, "acme", k4.Id, k4.KeySecret)
		setStatus := func(s pamapi.UserStatus) {
			resp, err := api.UpdateServiceUserWithResponse(ctx, "acme", "worker", pamapi.UpdateServiceUserJSONRequestBody{Status: &s}, admin)
			require.NoError(t, err)
			require.Equal(t, http.StatusNoContent, resp.StatusCode(), string(resp.Body))
		}
		setStatus(pamapi.UserStatusDisabled)
		code, name := tokenStatus(t, api, tok4)
		assert.Equal(t, http.StatusUnauthorized, code)
		assert.Equal(t, pamapi.ErrorNameAuthorizationError, name)
		code, name = issueStatus(t, api, k4.Id, k4.KeySecret)
		assert.Equal(t, http.StatusUnauthorized, code)
		assert.Equal(t, pamapi.ErrorNameAuthenticationError, name)

		setStatus(pamapi.UserStatusActive)
		code, name = tokenStatus(t, api, tok4)
		assert.Equal(t, http.StatusUnauthorized, code, "enabling again does not revive old tokens")
		assert.Equal(t, pamapi.ErrorNameAuthorizationError, name)
		fresh := issueToken(t, api, "acme", k4.Id, k4.KeySecret)
		code, _ = tokenStatus(t, api, fresh)
		assert.Equal(t, http.StatusOK, code)
	})
}

func TestGroups_SoftDeleteHidesKeepsAndFreesTheName(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	api, admin := rootSession(t, env)
	ctx := context.Background()

	created, err := api.CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "ops", Roles: []pamapi.Role{pamapi.RoleSecurityAdmin, pamapi.RoleEndUser}}, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	assert.Equal(t, []pamapi.Role{pamapi.RoleEndUser, pamapi.RoleSecurityAdmin}, created.JSON201.Roles)
	assert.Nil(t, created.JSON201.DeletedAt)

	upd, err := api.UpdateGroupWithResponse(ctx, "acme", "ops", pamapi.UpdateGroupJSONRequestBody{Roles: []pamapi.Role{pamapi.RoleResourceAdmin}}, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, upd.StatusCode(), string(upd.Body))

	del, err := api.DeleteGroupWithResponse(ctx, "acme", "ops", admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, del.StatusCode(), string(del.Body))

	got, err := api.GetGroupWithResponse(ctx, "acme", "ops", admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), "a deleted group still answers")
	require.NotNil(t, got.JSON200.DeletedAt)
	assert.Equal(t, []pamapi.Role{pamapi.RoleResourceAdmin}, got.JSON200.Roles)

	names := func(includeDeleted bool) []string {
		resp, err := api.ListGroupsWithResponse(ctx, "acme", &pamapi.ListGroupsParams{IncludeDeleted: &includeDeleted}, admin)
		require.NoError(t, err)
		var out []string
		for _, g := range resp.JSON200.List {
			out = append(out, g.Name)
		}
		return out
	}
	assert.Equal(t, []string{"root-group"}, names(false))
	assert.Equal(t, []string{"ops", "root-group"}, names(true))

	again, err := api.CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "ops", Roles: []pamapi.Role{}}, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, again.StatusCode(), "a deleted group's name can be reused")
	got, err = api.GetGroupWithResponse(ctx, "acme", "ops", admin)
	require.NoError(t, err)
	assert.Nil(t, got.JSON200.DeletedAt, "the live group wins over the deleted one")

	for _, op := range []func() (int, error){
		func() (int, error) {
			r, err := api.UpdateGroupWithResponse(ctx, "acme", "gone", pamapi.UpdateGroupJSONRequestBody{Roles: []pamapi.Role{}}, admin)
			return r.StatusCode(), err
		},
		func() (int, error) {
			r, err := api.DeleteGroupWithResponse(ctx, "acme", "gone", admin)
			return r.StatusCode(), err
		},
	} {
		code, err := op()
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, code)
	}
}

func TestRoles_EffectivePermissionFollowsMembershipAtOnce(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	root := env.ServiceUser(t, "acme", "root", "pam_admin")
	bot := env.ServiceUser(t, "acme", "bot") // in bot-group, no roles
	env.HumanUser(t, "acme", "alice")
	api := newAPI(t, env.URL)
	ctx := context.Background()
	admin := bearer(issueToken(t, api, "acme", root.KeyID, root.KeySecret))
	botTok := bearer(issueToken(t, api, "acme", bot.KeyID, bot.KeySecret))

	me := func() []pamapi.Role {
		r, err := api.GetCurrentUserWithResponse(ctx, "acme", botTok)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.StatusCode(), string(r.Body))
		assert.Equal(t, "bot", r.JSON200.Name)
		assert.Equal(t, pamapi.UserKindService, r.JSON200.Kind)
		return r.JSON200.Roles
	}
	canRead := func() int {
		r, err := api.ListUsersWithResponse(ctx, "acme", nil, botTok)
		require.NoError(t, err)
		return r.StatusCode()
	}
	assert.Empty(t, me())
	assert.Equal(t, http.StatusForbidden, canRead())

	for _, g := range []struct {
		name  string
		roles []pamapi.Role
	}{{"readers", []pamapi.Role{pamapi.RoleSecurityAdmin}}, {"users", []pamapi.Role{pamapi.RoleEndUser}}} {
		r, err := api.CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: g.name, Roles: g.roles}, admin)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, r.StatusCode())
		add, err := api.AddGroupMemberWithResponse(ctx, "acme", g.name, pamapi.AddGroupMemberJSONRequestBody{UserName: "bot"}, admin)
		require.NoError(t, err)
		require.Equal(t, http.StatusNoContent, add.StatusCode(), string(add.Body))
	}
	assert.Equal(t, []pamapi.Role{pamapi.RoleEndUser, pamapi.RoleSecurityAdmin}, me(), "the union of the groups' roles")
	assert.Equal(t, http.StatusOK, canRead(), "the most permissive role wins")

	dup, err := api.AddGroupMemberWithResponse(ctx, "acme", "readers", pamapi.AddGroupMemberJSONRequestBody{UserName: "bot"}, admin)
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, dup.StatusCode())

	human, err := api.AddGroupMemberWithResponse(ctx, "acme", "readers", pamapi.AddGroupMemberJSONRequestBody{UserName: "alice"}, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, human.StatusCode())
	members, err := api.ListGroupMembersWithResponse(ctx, "acme", "readers", nil, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, members.StatusCode())
	var names []string
	for _, u := range members.JSON200.List {
		names = append(names, u.Name+"/"+string(u.Kind))
	}
	assert.Equal(t, []string{"alice/human", "bot/service"}, names)

	rm, err := api.RemoveGroupMemberWithResponse(ctx, "acme", "readers", "bot", admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, rm.StatusCode())
	assert.Equal(t, []pamapi.Role{pamapi.RoleEndUser}, me())
	assert.Equal(t, http.StatusForbidden, canRead(), "removal takes effect on the next request")

	add, err := api.AddGroupMemberWithResponse(ctx, "acme", "readers", pamapi.AddGroupMemberJSONRequestBody{UserName: "bot"}, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, add.StatusCode())
	del, err := api.DeleteGroupWithResponse(ctx, "acme", "readers", admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, del.StatusCode())
	assert.Equal(t, http.StatusForbidden, canRead(), "a deleted group grants nothing")
}

// An instant a creation answers with is the one later reads return, on
// either backend (PostgreSQL keeps microseconds, the clock has
// nanoseconds), and a token works until exactly the expiry it was issued
// with.
func TestTimestamps_AnswersShowWhatIsStored(t *testing.T) {
	ctx := context.Background()
	fake := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC))
	env := pamtest.Start(t, pamtest.Options{Clock: fake, Settings: pam.Settings{TokenTTL: time.Hour}})
	env.Team(t, "acme")
	api, admin := rootSession(t, env)

	created, err := api.CreateServiceUserWithResponse(ctx, "acme", pamapi.CreateServiceUserJSONRequestBody{Name: "worker"}, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	got, err := api.GetServiceUserWithResponse(ctx, "acme", "worker", admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	assert.Equal(t, created.JSON201.CreatedAt, got.JSON200.CreatedAt)

	expires := fake.Now().Add(30*time.Minute + 987654321*time.Nanosecond)
	key, err := api.CreateServiceUserKeyWithResponse(ctx, "acme", "worker", pamapi.CreateServiceUserKeyJSONRequestBody{ExpiresAt: &expires}, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, key.StatusCode(), string(key.Body))
	keys, err := api.ListServiceUserKeysWithResponse(ctx, "acme", "worker", nil, admin)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, keys.StatusCode(), string(keys.Body))
	require.Len(t, keys.JSON200.List, 1)
	assert.Equal(t, key.JSON201.CreatedAt, keys.JSON200.List[0].CreatedAt)
	assert.Equal(t, key.JSON201.ExpiresAt, keys.JSON200.List[0].ExpiresAt)

	// The token's expiry is the key's, as stored; the token works until
	// the instant before it.
	tok, err := api.IssueServiceTokenWithResponse(ctx, "acme", pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.JSON201.Id, KeySecret: key.JSON201.KeySecret})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, tok.StatusCode(), string(tok.Body))
	assert.Equal(t, *key.JSON201.ExpiresAt, tok.JSON200.ExpiresAt)
	fake.Advance(tok.JSON200.ExpiresAt.Sub(fake.Now()) - time.Nanosecond)
	code, _ := tokenStatus(t, api, tok.JSON200.BearerToken)
	assert.Equal(t, http.StatusOK, code, "a token works until its expiry")
	fake.Advance(time.Nanosecond)
	code, name := tokenStatus(t, api, tok.JSON200.BearerToken)
	assert.Equal(t, http.StatusUnauthorized, code, "and not at it")
	assert.Equal(t, pamapi.ErrorNameAuthenticationError, name)
}

// A token whose key, user or team no longer exists never authenticates.
// On PostgreSQL tokens declare no foreign keys (their checks locked the
// parent rows of every exchange), so an exchange racing its team's removal
// can leave such a token; SQLite's foreign keys refuse it.
func TestTokens_ATokenOfAKeyUserOrTeamThatIsGoneNeverAuthenticates(t *testing.T) {
	ctx := context.Background()
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot")
	api := newAPI(t, env.URL)
	for _, column := range []string{"key_id", "user_id", "team_id"} {
		t.Run(column, func(t *testing.T) {
			tok := issueToken(t, api, "acme", key.KeyID, key.KeySecret) // not read yet, so not cached
			_, err := env.DB.ExecContext(ctx, `UPDATE tokens SET `+column+` = 'gone' WHERE created_at = (SELECT MAX(created_at) FROM tokens)`)
			if err != nil {
				assert.ErrorContains(t, err, "FOREIGN KEY", "only a foreign key refuses it")
				return
			}
			status, name := tokenStatus(t, api, tok)
			assert.Equal(t, http.StatusUnauthorized, status)
			assert.Equal(t, pamapi.ErrorNameAuthenticationError, name)
		})
	}
}

// A token exchange keeps the list pages rendered (no cache holds a token's
// absence); a write that changes what a list shows drops them.
func TestTokens_AnExchangeKeepsTheListPagesRendered(t *testing.T) {
	ctx := context.Background()
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	api := newAPI(t, env.URL)
	tok := issueToken(t, api, "acme", key.KeyID, key.KeySecret)
	// What the set-up committed is heard (PostgreSQL) before the count.
	require.NoError(t, sqldb.Sync(ctx, env.DB))
	before := pam.RenderedGeneration(env.Server)
	for range 3 {
		issueToken(t, api, "acme", key.KeyID, key.KeySecret)
	}
	require.NoError(t, sqldb.Sync(ctx, env.DB))
	assert.Equal(t, before, pam.RenderedGeneration(env.Server), "exchanges drop no list page")
	resp, err := api.CreateGroup(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "new-group", Roles: []pamapi.Role{}}, bearer(tok))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.NotEqual(t, before, pam.RenderedGeneration(env.Server), "a create drops them")
}
