package fax

import (
	"bytes"
	"context"
	"crypto/rand"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/secretbox"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
)

func TestServerSecrets_AreSealedAtRest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := testdb.Open(t, testMigrations)
	key, err := LoadOrCreateMasterKey(filepath.Join(dir, "fax-master.key"))
	require.NoError(t, err)

	first, err := New(ctx, Config{Deps: Deps{DB: db}, MasterKey: key})
	require.NoError(t, err)
	for _, name := range []string{"webhook_signing_seed", "media_link_key"} {
		var stored []byte
		require.NoError(t, db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = '`+name+`'`).Scan(&stored))
		assert.True(t, secretbox.IsSealed(string(stored)), "%s is sealed", name)
	}
	var stored []byte
	require.NoError(t, db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = 'webhook_signing_seed'`).Scan(&stored))
	assert.False(t, bytes.Contains(stored, first.signingKey.Seed()), "the database holds no plain signing seed")

	again, err := New(ctx, Config{Deps: Deps{DB: db}, MasterKey: key})
	require.NoError(t, err)
	assert.Equal(t, first.Operator().WebhookPublicKey(), again.Operator().WebhookPublicKey(), "the signing key survives restarts")

	_, err = New(ctx, Config{Deps: Deps{DB: db}, MasterKey: make([]byte, secretbox.KeySize)})
	assert.Error(t, err, "another master key cannot read the secrets")
	_, err = New(ctx, Config{Deps: Deps{DB: db}})
	assert.Error(t, err, "a master key is required")
}

func TestServerSecrets_WrittenBeforeSealingAreSealedInPlace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := testdb.Open(t, testMigrations)
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	_, err := db.ExecContext(ctx, sqldb.New(db, sqldb.Options{}).Rebind(`INSERT INTO settings (name, value) VALUES ('webhook_signing_seed', ?)`), seed)
	require.NoError(t, err)
	key, err := LoadOrCreateMasterKey(filepath.Join(dir, "fax-master.key"))
	require.NoError(t, err)

	srv, err := New(ctx, Config{Deps: Deps{DB: db}, MasterKey: key})
	require.NoError(t, err)
	assert.Equal(t, seed, []byte(srv.signingKey.Seed()), "the existing key is kept")
	var stored []byte
	require.NoError(t, db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = 'webhook_signing_seed'`).Scan(&stored))
	assert.True(t, secretbox.IsSealed(string(stored)), "and sealed in place")
}
