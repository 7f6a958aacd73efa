package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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

// adminRunner runs `apistack admin --data-dir dataDir ARGS...` in the test's
// process and returns its JSON answer (nil when it printed nothing); an
// error fails the test.
func adminRunner(t *testing.T, dataDir string) func(args ...string) map[string]any {
	return func(args ...string) map[string]any {
		t.Helper()
		var out bytes.Buffer
		require.NoError(t, adminCommand(context.Background(), append([]string{"--data-dir", dataDir}, args...), &out, io.Discard))
		var v map[string]any
		if out.Len() > 0 {
			require.NoError(t, json.Unmarshal(out.Bytes(), &v), out.String())
		}
		return v
	}
}

func TestAdminStorageCommands_ManageBucketsAndKeys(t *testing.T) {
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	run := adminRunner(t, dataDir)
	assert.Equal(t, "Enabled", run("storage-create-bucket", "--versioned", "backups")["versioning"])
	assert.Equal(t, "Suspended", run("storage-set-versioning", "backups", "Suspended")["versioning"])
	assert.Len(t, run("storage-list-buckets")["buckets"], 3)
	key := run("storage-create-key", "backup job")
	assert.Len(t, run("storage-list-keys")["keys"], 2)

	c := storageClient(t, map[string]string{"endpoint": creds["storage"]["endpoint"], "region": creds["storage"]["region"],
		"key_id": key["key_id"].(string), "secret": key["secret"].(string)})
	require.NoError(t, c.PutLifecycle(context.Background(), "backups", storage.Configuration(storage.ExpireNoncurrentAfterDays("old", "", 7, 0))))

	// A key of another account may not touch the default account's bucket.
	other := run("storage-create-key", "--account", "tenant-b", "tenant b")
	assert.Equal(t, "tenant-b", other["account"])
	oc := storageClient(t, map[string]string{"endpoint": creds["storage"]["endpoint"], "region": creds["storage"]["region"],
		"key_id": other["key_id"].(string), "secret": other["secret"].(string)})
	err := oc.PutLifecycle(context.Background(), "backups", storage.Configuration(storage.ExpireNoncurrentAfterDays("x", "", 1, 0)))
	var se *storage.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "AccessDenied", se.Code)
	own := run("storage-create-bucket", "--account", "tenant-b", "tenant-b-logs")
	assert.Equal(t, "tenant-b", own["account"])
	require.NoError(t, oc.PutLifecycle(context.Background(), "tenant-b-logs", storage.Configuration(storage.ExpireAfterDays("logs", "", 1))))
	run("storage-delete-bucket", "tenant-b-logs")
	run("storage-delete-key", other["key_id"].(string))

	run("storage-delete-bucket", "backups")
	run("storage-delete-key", key["key_id"].(string))
	err = adminCommand(context.Background(), []string{"--data-dir", dataDir, "storage-delete-key", key["key_id"].(string)}, io.Discard, io.Discard)
	assert.Error(t, err, "the key is gone")
	err = adminCommand(context.Background(), []string{"--data-dir", dataDir, "storage-set-versioning", "demo-bucket", "Off"}, io.Discard, io.Discard)
	assert.Error(t, err)
}
