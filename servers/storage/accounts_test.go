package storage_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	clientstorage "github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// clientOf is the ergonomic client signing with key, at the fake clock's time.
func clientOf(t *testing.T, env *storagetest.Env, key storage.AccessKey, now func() time.Time) *clientstorage.Client {
	t.Helper()
	c, err := clientstorage.New(clientstorage.Config{
		Endpoint: env.URL, Region: storage.DefaultRegion, KeyID: key.KeyID, Secret: key.Secret, Now: now,
	})
	require.NoError(t, err)
	return c
}

func requireAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var er *clientstorage.Error
	require.ErrorAs(t, err, &er)
	assert.Equal(t, status, er.StatusCode)
	assert.Equal(t, code, er.Code)
}

func TestAccounts_AKeyActsOnItsOwnAccountsBucketsOnly(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	ctx := context.Background()
	keyB, err := env.Operator.CreateKey(ctx, "tenant-b", "tenant b")
	require.NoError(t, err)
	_, err = env.Operator.CreateBucket(ctx, "tenant-b", "tenant-b-logs", storage.Unversioned)
	require.NoError(t, err)
	a, b := clientOf(t, env, env.Key, fake.Now), clientOf(t, env, keyB, fake.Now)

	rulesA := clientstorage.Configuration(clientstorage.ExpireAfterDays("a-logs", "logs/", 30))
	require.NoError(t, a.PutLifecycle(ctx, storagetest.Bucket, rulesA))
	before, err := a.GetLifecycle(ctx, storagetest.Bucket)
	require.NoError(t, err)

	// B's key is refused on A's bucket, for every operation.
	rulesB := clientstorage.Configuration(clientstorage.ExpireAfterDays("b-wipe", "", 1))
	requireAPIError(t, b.PutLifecycle(ctx, storagetest.Bucket, rulesB), http.StatusForbidden, "AccessDenied")
	_, err = b.GetLifecycle(ctx, storagetest.Bucket)
	requireAPIError(t, err, http.StatusForbidden, "AccessDenied")
	requireAPIError(t, b.DeleteLifecycle(ctx, storagetest.Bucket), http.StatusForbidden, "AccessDenied")

	after, err := a.GetLifecycle(ctx, storagetest.Bucket)
	require.NoError(t, err)
	assert.Equal(t, before, after, "A's rules are unchanged")

	// Each account works on its own buckets, and is refused on the other's.
	require.NoError(t, b.PutLifecycle(ctx, "tenant-b-logs", rulesB))
	_, err = a.GetLifecycle(ctx, "tenant-b-logs")
	requireAPIError(t, err, http.StatusForbidden, "AccessDenied")
	requireAPIError(t, a.DeleteLifecycle(ctx, "tenant-b-logs"), http.StatusForbidden, "AccessDenied")
	got, err := b.GetLifecycle(ctx, "tenant-b-logs")
	require.NoError(t, err)
	require.Len(t, got.Rules, 1)
	assert.Equal(t, "b-wipe", *got.Rules[0].ID)

	// A bucket that does not exist is NoSuchBucket whoever asks.
	_, err = b.GetLifecycle(ctx, "no-such-bucket")
	requireAPIError(t, err, http.StatusNotFound, "NoSuchBucket")
}
