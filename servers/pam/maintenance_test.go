package pam_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/pam"
)

func TestSetOffline_SurvivesARestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pam.db")
	open := func() *pam.Server {
		db, err := sqlitedb.Open(ctx, path, pam.Migrations())
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		srv, err := pam.New(ctx, pam.Config{DB: db})
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
