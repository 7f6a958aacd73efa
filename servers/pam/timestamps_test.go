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
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// An instant a creation answers with is the one later reads return, on
// either backend (PostgreSQL keeps microseconds, the clock has
// nanoseconds), and a token works until exactly the expiry it was issued
// with.
func TestTimestamps_AnswersShowWhatIsStored(t *testing.T) {
	ctx := context.Background()
	fake := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC))
	env := pamtest.Start(t, pamtest.Options{Clock: fake, Settings: pam.Settings{TokenTTL: time.Hour}})
	env.Team(t, "acme")
	root := env.ServiceUser(t, "acme", "root", "pam_admin")
	api := newAPI(t, env.URL)
	admin := bearer(issueToken(t, api, "acme", root.KeyID, root.KeySecret))

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
