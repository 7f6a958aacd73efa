package pam_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/apistack/apistack/clients/pam"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/pam/pamtest"
)

// collect drains an iterator, failing the test on an error.
func collect[T any](t *testing.T, seq func(yield func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for it, err := range seq {
		require.NoError(t, err)
		out = append(out, it)
	}
	return out
}

func TestClient_ManagesGroupsMembersServiceUsersAndKeys(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	env.HumanUser(t, "acme", "alice")
	c := newTestClient(t, env, "acme", "pam_admin")
	ctx := context.Background()

	me, err := c.GetCurrentUser(ctx)
	require.NoError(t, err)
	assert.Equal(t, "bot", me.Name)
	assert.Equal(t, []pam.Role{pam.PAMAdmin}, me.Roles)

	g, err := c.CreateGroup(ctx, "ops", pam.SecurityAdmin)
	require.NoError(t, err)
	assert.Equal(t, []pam.Role{pam.SecurityAdmin}, g.Roles)
	require.NoError(t, c.UpdateGroup(ctx, "ops", pam.ResourceAdmin, pam.EndUser))
	g, err = c.GetGroup(ctx, "ops")
	require.NoError(t, err)
	assert.Equal(t, []pam.Role{pam.EndUser, pam.ResourceAdmin}, g.Roles)

	require.NoError(t, c.AddGroupMember(ctx, "ops", "alice"))
	members := collect(t, c.ListGroupMembers(ctx, "ops", nil))
	require.Len(t, members, 1)
	assert.Equal(t, pam.Human, members[0].Kind)
	require.NoError(t, c.RemoveGroupMember(ctx, "ops", "alice"))
	assert.Empty(t, collect(t, c.ListGroupMembers(ctx, "ops", &pam.ListOptions{PageSize: 1})))

	svc, err := c.CreateServiceUser(ctx, "deployer")
	require.NoError(t, err)
	assert.Equal(t, pam.Active, svc.Status)
	key, err := c.CreateServiceUserKey(ctx, "deployer", &pam.CreateServiceUserKeyOptions{ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	require.NotNil(t, key.ExpiresAt)
	keys := collect(t, c.ListServiceUserKeys(ctx, "deployer", nil))
	require.Len(t, keys, 1)
	assert.Equal(t, key.ID, keys[0].ID)

	// The new key works as a client of its own.
	deployer, err := pam.New(pam.Config{BaseURL: env.URL, Team: "acme", KeyID: key.ID, KeySecret: key.KeySecret, Transport: contractTransport(t)})
	require.NoError(t, err)
	who, err := deployer.GetCurrentUser(ctx)
	require.NoError(t, err)
	assert.Equal(t, "deployer", who.Name)

	require.NoError(t, c.UpdateServiceUser(ctx, "deployer", pam.UpdateServiceUserOptions{Name: "releaser", Status: pam.Disabled}))
	got, err := c.GetServiceUser(ctx, "releaser")
	require.NoError(t, err)
	assert.Equal(t, pam.Disabled, got.Status)
	_, err = deployer.GetCurrentUser(ctx)
	var apiErr *pam.Error
	require.ErrorAs(t, err, &apiErr, "a disabled user's client fails with a typed error")
	assert.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)

	require.NoError(t, c.DeleteServiceUserKey(ctx, "releaser", key.ID))
	assert.Empty(t, collect(t, c.ListServiceUserKeys(ctx, "releaser", nil)))

	users := collect(t, c.ListUsers(ctx, &pam.ListUsersOptions{Kind: pam.Human}))
	require.Len(t, users, 1)
	assert.Equal(t, "alice", users[0].Name)
	u, err := c.GetUser(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, pam.Human, u.Kind)
	disabled := collect(t, c.ListServiceUsers(ctx, &pam.ListServiceUsersOptions{Status: pam.Disabled}))
	require.Len(t, disabled, 1)
	assert.Equal(t, "releaser", disabled[0].Name)

	require.NoError(t, c.DeleteGroup(ctx, "ops"))
	deleted := collect(t, c.ListGroups(ctx, &pam.ListGroupsOptions{IncludeDeleted: true, Contains: "ops"}))
	require.Len(t, deleted, 1)
	assert.NotNil(t, deleted[0].DeletedAt)

	roles := collect(t, c.ListRoles(ctx, &pam.ListOptions{PageSize: 4}))
	assert.Len(t, roles, 6)
}

func TestClient_MethodsReturnTypedErrors(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	c := newTestClient(t, env, "acme", "pam_admin")
	ctx := context.Background()
	_, err := c.CreateGroup(ctx, "bot-group")
	require.Error(t, err)

	tests := []struct {
		name   string
		err    error
		status int
		want   pam.ErrorName
	}{
		{"create a taken name", err, http.StatusConflict, pam.ResourceAlreadyExists},
		{"get a missing group", func() error { _, err := c.GetGroup(ctx, "nope"); return err }(), http.StatusNotFound, pam.ResourceDoesNotExist},
		{"delete a missing key", c.DeleteServiceUserKey(ctx, "bot", "nope"), http.StatusNotFound, pam.ResourceDoesNotExist},
		{"list another user's keys", collectErr(c.ListServiceUserKeys(ctx, "nobody", nil)), http.StatusNotFound, pam.ResourceDoesNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var apiErr *pam.Error
			require.True(t, errors.As(tt.err, &apiErr), "%v", tt.err)
			assert.Equal(t, tt.status, apiErr.StatusCode)
			assert.Equal(t, tt.want, apiErr.Name)
			assert.NotEmpty(t, apiErr.Message)
		})
	}
}

func collectErr[T any](seq func(yield func(T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestClient_RetriesWhileTheServiceIsOffline(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	c := newTestClient(t, env, "acme")
	_, err := c.Token(context.Background())
	require.NoError(t, err)

	require.NoError(t, env.Operator.SetOffline(context.Background(), true))
	back := time.AfterFunc(300*time.Millisecond, func() { _ = env.Operator.SetOffline(context.Background(), false) })
	defer back.Stop()
	me, err := c.GetCurrentUser(context.Background())
	require.NoError(t, err, "503 service_offline is retried until the service is back")
	assert.Equal(t, "bot", me.Name)
	assert.GreaterOrEqual(t, env.Count(http.MethodGet, "/v1/teams/acme/current_user"), 2)
}

func TestClient_BacksOffOn503WhateverRetryAtSays(t *testing.T) {
	// X-RateLimit-Retry-At tells when the rate limit allows a request, not
	// when a service that is offline comes back: on 503 the client backs off
	// on its own schedule instead of waiting an hour.
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-RateLimit-Retry-At", fmt.Sprint(time.Now().Add(time.Hour).Unix()))
		if strings.HasSuffix(r.URL.Path, "/service_token") {
			fmt.Fprintf(w, `{"bearer_token":"t","expires_at":%q,"team_name":"acme"}`, time.Now().Add(time.Hour).Format(time.RFC3339))
			return
		}
		if lists.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"code":503,"error":"service_offline","message":"maintenance","error_cause":[]}`)
			return
		}
		fmt.Fprint(w, `{"list":[]}`)
	}))
	defer srv.Close()
	c, err := pam.New(pam.Config{BaseURL: srv.URL, Team: "acme", KeyID: "k", KeySecret: "s"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, err := range c.ListGroups(ctx, nil) {
		require.NoError(t, err)
	}
	assert.Equal(t, int32(3), lists.Load(), "two 503s, then the answer")
}
