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
	assert.False(t, first.Offline())
	require.NoError(t, first.SetOffline(ctx, true))
	assert.True(t, open().Offline(), "a restarted server stays in maintenance")

	require.NoError(t, first.SetOffline(ctx, false))
	assert.False(t, open().Offline())
}
