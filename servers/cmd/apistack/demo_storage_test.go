package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/storage"
)

func storageClient(t *testing.T, creds map[string]string) *storage.Client {
	t.Helper()
	c, err := storage.New(storage.Config{Endpoint: creds["endpoint"], Region: creds["region"], KeyID: creds["key_id"], Secret: creds["secret"]})
	require.NoError(t, err)
	return c
}

func TestServeDemo_StorageCredentialsSignAndSurviveARestart(t *testing.T) {
	dataDir := t.TempDir()
	creds, stdout, stop := startServe(t, dataDir)
	sc, ok := creds["storage"]
	require.True(t, ok, "the storage section is written")
	assert.Contains(t, stdout.String(), "--aws-sigv4 'cloud:cloud:"+sc["region"]+":s3'")
	ctx := context.Background()

	c := storageClient(t, sc)
	require.NoError(t, c.PutLifecycle(ctx, sc["bucket"], storage.Configuration(storage.ExpireAfterDays("logs", "logs/", 30))))
	require.NoError(t, c.PutLifecycle(ctx, sc["versioned_bucket"], storage.Configuration(storage.ExpireNoncurrentAfterDays("old", "", 30, 0))))
	require.NoError(t, stop())

	again, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	for _, k := range []string{"key_id", "secret", "bucket", "versioned_bucket", "region"} {
		assert.Equal(t, sc[k], again["storage"][k], "a restart keeps the buckets and the key: %s", k)
	}
	got, err := storageClient(t, again["storage"]).GetLifecycle(ctx, sc["bucket"])
	require.NoError(t, err)
	require.Len(t, got.Rules, 1)
	assert.Equal(t, "logs", *got.Rules[0].ID)
}
