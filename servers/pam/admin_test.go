package pam_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
