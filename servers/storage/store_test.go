package storage

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/lifecycledoc"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/testdb"
)

// SQLite only: it upgrades an SQLite file made before accounts; the
// PostgreSQL set starts at the final schema (migrations/postgres).
func TestMigrations_GiveExistingBucketsAndKeysTheDefaultAccountAndStoredDocumentsTheProtocolNamespace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := fs.ReadFile(API.Migrations().SQLite, "00001_init.sql")
	require.NoError(t, err)
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "storage.db"), fstest.MapFS{"00001_init.sql": {Data: first}})
	require.NoError(t, err)
	defer db.Close()
	masterKey, err := LoadOrCreateMasterKey(filepath.Join(dir, "master.key"))
	require.NoError(t, err)
	srv, err := New(Config{Deps: Deps{DB: db}, MasterKey: masterKey})
	require.NoError(t, err)

	// Data of the schema before accounts.
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	_, err = db.ExecContext(ctx, `INSERT INTO buckets (name, versioning, created_at) VALUES ('old-bucket', 'Unversioned', ?)`, now)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO access_keys (key_id, secret, description, created_at) VALUES ('CKOLDKEY', ?, 'old', ?)`,
		srv.store.box.Seal("CKOLDKEY", []byte("old-secret")), now)
	require.NoError(t, err)

	// A configuration as the service stored it then: in apistack's namespace.
	old := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<LifecycleConfiguration xmlns="http://cloud.apistack.dev/doc/2006-03-01/"><Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule></LifecycleConfiguration>`
	_, err = db.ExecContext(ctx, `INSERT INTO lifecycle_configurations (bucket, document, updated_at) VALUES ('old-bucket', ?, ?)`, old, now)
	require.NoError(t, err)

	require.NoError(t, sqlitedb.Migrate(ctx, db, API.Migrations().SQLite))
	doc, err := srv.store.lifecycle(ctx, "old-bucket")
	require.NoError(t, err)
	assert.Contains(t, string(doc), `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>logs</ID>`,
		"stored configurations are answered in the protocol's namespace")
	cfg, err := lifecycledoc.Decode(doc)
	require.NoError(t, err)
	require.Len(t, cfg.Rules, 1)
	assert.Equal(t, lifecycledoc.Namespace, cfg.XMLName.Space)

	b, err := srv.Operator().Bucket(ctx, "old-bucket")
	require.NoError(t, err)
	assert.Equal(t, DefaultAccount, b.Account)
	assert.Equal(t, now, b.CreatedAt, "the instant stored as a TIMESTAMP is read back from its BIGINT")
	keys, err := srv.Operator().Keys(ctx)
	require.NoError(t, err)
	require.Len(t, keys, 1)
	assert.Equal(t, DefaultAccount, keys[0].Account)
	assert.Equal(t, now, keys[0].CreatedAt)
	assert.True(t, srv.Operator().KeyWorks(ctx, DefaultAccount, "CKOLDKEY", "old-secret"), "the old key acts on the old bucket's account")
}

func TestCreateKey_StoresNoPlainSecret(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := testdb.Open(t, API.Migrations())
	key, err := LoadOrCreateMasterKey(filepath.Join(dir, "master.key"))
	require.NoError(t, err)
	srv, err := New(Config{Deps: Deps{DB: db}, MasterKey: key})
	require.NoError(t, err)

	k, err := srv.Operator().CreateKey(ctx, "", "ci")
	require.NoError(t, err)
	var stored string
	require.NoError(t, srv.store.db.QueryRowContext(ctx, `SELECT secret FROM access_keys WHERE key_id = ?`, k.KeyID).Scan(&stored))
	assert.False(t, strings.Contains(stored, k.Secret), "the database holds no plain secret")
	assert.True(t, srv.Operator().KeyWorks(ctx, DefaultAccount, k.KeyID, k.Secret))

	// The same database under another master key cannot verify the key.
	srv2, err := New(Config{Deps: Deps{DB: db}, MasterKey: make([]byte, MasterKeySize)})
	require.NoError(t, err)
	assert.False(t, srv2.Operator().KeyWorks(ctx, DefaultAccount, k.KeyID, k.Secret))
}
