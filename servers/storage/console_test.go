package storage_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

func TestConsoleBuckets_VersioningAndLifecycleRules(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	doc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "lifecycle", "valid", "all-supported-actions.xml"))
	require.NoError(t, err)
	// The document as PutLifecycle stores it (the API's own tests cover the
	// PUT); the console reads what is stored.
	_, err = env.DB.Exec(`INSERT INTO lifecycle_configurations (bucket, document, updated_at) VALUES ($1, $2, $3)`, // $n: both engines read it
		storagetest.Bucket, string(doc), time.Now().UnixMicro())
	require.NoError(t, err)

	buckets, err := env.Server.Console().Buckets(context.Background())
	require.NoError(t, err)
	byName := map[string]storage.ConsoleBucket{}
	for _, b := range buckets {
		byName[b.Name] = b
	}
	versioned := byName[storagetest.VersionedBucket]
	assert.Equal(t, storage.Enabled, versioned.Versioning)
	assert.Empty(t, versioned.XML)
	assert.Empty(t, versioned.Rules)

	photos := byName[storagetest.Bucket]
	assert.Equal(t, storage.Unversioned, photos.Versioning)
	assert.Equal(t, string(doc), photos.XML)
	assert.Equal(t, []storage.ConsoleRule{{
		ID: "all", Status: "Enabled", Filter: `prefix "x/"`,
		Actions: []string{"expire after 90 days", "expire noncurrent versions after 10 days", "abort incomplete uploads after 2 days"},
	}}, photos.Rules)
}
