package stack_test

import (
	"context"
	"flag"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/stack"
	"github.com/apistack/apistack/servers/storage"
)

func TestOpen_NeedsADataDirOrAnOpener(t *testing.T) {
	_, err := stack.Open(context.Background(), stack.Config{})
	require.Error(t, err)
}

// A stack on a data directory keeps its tenants and keys across a restart,
// as `serve --demo` relies on; one from templates starts empty.
func TestOpen_DemoTenantsSurviveARestartOfTheDataDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	start := func(cfg stack.Config) (*stack.Stack, map[string]string) {
		st, err := stack.Open(ctx, cfg)
		require.NoError(t, err)
		urls := serveHandlers(t, st)
		st.Start(ctx)
		return st, urls
	}
	st, urls := start(stack.Config{DataDir: dir})
	first, err := st.Seed(ctx, stack.Credentials{}, stack.TenantSet{Name: stack.DemoSet, URLs: urls, SampleSize: 5})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st, urls = start(stack.Config{DataDir: dir})
	again, err := st.Seed(ctx, first, stack.TenantSet{Name: stack.DemoSet, URLs: urls, SampleSize: 5})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	assert.Equal(t, first.PAM.KeyID, again.PAM.KeyID)
	assert.Equal(t, first.Fax.APIKey, again.Fax.APIKey)
	assert.Equal(t, first.Storage.Secret, again.Storage.Secret)
	assert.Equal(t, first.Restaurant.ClientID, again.Restaurant.ClientID)

	fresh, urls := start(stack.Config{DataDir: t.TempDir(), OpenDB: stack.OpenFromTemplates(t.TempDir(), t.TempDir())})
	defer fresh.Close()
	resp, err := http.Get(urls[stack.PAM] + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = fresh.PAM.Operator().CreateTeam(ctx, "demo")
	require.NoError(t, err, "a copy of the template has no team yet")
}

// The flags of every API's knobs read their tags, and the defaults a few
// packages also export as constants agree with them.
func TestSettings_FlagsShowTheDefaults(t *testing.T) {
	var s stack.Settings
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	s.RegisterFlags(fs)
	assert.Equal(t, fax.DefaultStepInterval, s.Fax.StepInterval)
	assert.Equal(t, storage.DefaultRegion, s.Storage.Region)
	assert.Equal(t, storage.DefaultDomain, s.Storage.Domain)
	assert.Equal(t, time.Hour, s.PAM.TokenTTL)
	assert.NotNil(t, fs.Lookup("fax-allow-private-destinations"), "a knob in a nested struct")
	require.NoError(t, fs.Parse([]string{"--fax-allow-private-destinations", "--restaurant-token-ttl", "2h"}))
	assert.True(t, s.Fax.Destinations.AllowPrivate)
	assert.Equal(t, 2*time.Hour, s.Restaurant.TokenTTL)
}
