package apistacktest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/apistacktest"
	"github.com/apistack/apistack/clients/pam"
)

// fixtureYAML makes a group, a service user in it with a named key, and a
// bucket.
const fixtureYAML = `pam:
  groups:
    - name: fx-group
      roles: [pam_admin]
  service_users:
    - name: fx-bot
      groups: [fx-group]
      keys: [ci]
storage:
  buckets:
    - name: uploads
      versioning: Enabled
`

func TestWithFixture_StartsInProcessAndConnectedFromTheFixture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fixture.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fixtureYAML), 0o600))
	check := func(t *testing.T, st *apistacktest.Stack) {
		ctx := context.Background()
		g, err := st.PAM.GetGroup(ctx, "fx-group")
		require.NoError(t, err)
		assert.Equal(t, []pam.Role{"pam_admin"}, g.Roles)
		require.NotNil(t, st.FixtureCredentials)
		require.NotNil(t, st.FixtureCredentials.Pam)
		key := st.FixtureCredentials.Pam.Keys["ci"]
		cfg := st.PAMConfig()
		cfg.KeyID, cfg.KeySecret = key.KeyId, key.KeySecret
		bot, err := pam.New(cfg)
		require.NoError(t, err)
		me, err := bot.GetCurrentUser(ctx)
		require.NoError(t, err)
		assert.Equal(t, "fx-bot", me.Name)
		require.NotNil(t, st.FixtureCredentials.Storage)
		bucket := (*st.FixtureCredentials.Storage.Buckets)["uploads"]
		_, err = st.Storage.GetLifecycle(ctx, bucket)
		assert.Contains(t, err.Error(), "404", "the bucket is there, without lifecycle rules")
	}
	t.Run("in process", func(t *testing.T) {
		t.Parallel()
		check(t, apistacktest.Start(t, apistacktest.Options{}, apistacktest.WithFixture(path)))
	})
	t.Run("connected", func(t *testing.T) {
		t.Parallel()
		host := apistacktest.Start(t, apistacktest.Options{})
		check(t, apistacktest.Connect(t, host.AdminURL, host.SandboxCreatorToken(), apistacktest.WithFixture(path)))
	})
}

func TestWithFixture_ABadFixtureFailsTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fixture.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"pam": {"groups": [{"name": "g", "roles": ["root"]}]}}`), 0o600))
	_, err := apistacktest.New(apistacktest.Options{}, apistacktest.WithFixture(path))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/pam/groups/0/roles/0")
	_, err = apistacktest.New(apistacktest.Options{}, apistacktest.WithFixture(filepath.Join(t.TempDir(), "missing.json")))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
