package admin_test

import (
	"context"
	"encoding/xml"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/internal/tenantapi"
	"github.com/apistack/apistack/servers/pam/pamtest"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// startStorage runs a storage server and the admin API over it, and returns
// the storage environment and an authenticated admin client validated against
// its spec.
func startStorage(t *testing.T) (*storagetest.Env, *adminapi.ClientWithResponses) {
	t.Helper()
	env := storagetest.Start(t, storagetest.Options{})
	return env, adminOver(t, admin.Config{Storage: env.Operator})
}

func TestStorageBuckets_CreateListVersionDelete(t *testing.T) {
	env, c := startStorage(t)
	ctx := context.Background()
	versioned := adminapi.CreateStorageBucketRequestVersioningEnabled

	created, err := c.CreateStorageBucketWithResponse(ctx, adminapi.CreateStorageBucketJSONRequestBody{Name: "logs"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), "%s", created.Body)
	assert.Equal(t, adminapi.StorageVersioningUnversioned, created.JSON201.Versioning)

	again, err := c.CreateStorageBucketWithResponse(ctx, adminapi.CreateStorageBucketJSONRequestBody{Name: "logs", Versioning: &versioned})
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, again.StatusCode())

	list, err := c.ListStorageBucketsWithResponse(ctx)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, list.StatusCode())
	var names []string
	for _, b := range list.JSON200.Buckets {
		names = append(names, b.Name)
	}
	assert.Equal(t, []string{storagetest.VersionedBucket, "logs", storagetest.Bucket}, names)

	set, err := c.SetStorageBucketVersioningWithResponse(ctx, "logs", adminapi.SetStorageBucketVersioningJSONRequestBody{Status: adminapi.SetStorageBucketVersioningRequestStatusEnabled})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, set.StatusCode(), "%s", set.Body)
	assert.Equal(t, adminapi.StorageVersioningEnabled, set.JSON200.Versioning)
	set, err = c.SetStorageBucketVersioningWithResponse(ctx, "logs", adminapi.SetStorageBucketVersioningJSONRequestBody{Status: adminapi.SetStorageBucketVersioningRequestStatusSuspended})
	require.NoError(t, err)
	assert.Equal(t, adminapi.StorageVersioningSuspended, set.JSON200.Versioning)
	b, err := env.Operator.Bucket(ctx, "logs")
	require.NoError(t, err)
	assert.True(t, b.Versioning.Versioned(), "a suspended bucket keeps its noncurrent versions")

	got, err := c.GetStorageBucketWithResponse(ctx, "logs")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, got.StatusCode())

	del, err := c.DeleteStorageBucketWithResponse(ctx, "logs")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, del.StatusCode())
	for _, status := range []func() (int, error){
		func() (int, error) { r, err := c.GetStorageBucketWithResponse(ctx, "logs"); return r.StatusCode(), err },
		func() (int, error) {
			r, err := c.DeleteStorageBucketWithResponse(ctx, "logs")
			return r.StatusCode(), err
		},
		func() (int, error) {
			r, err := c.SetStorageBucketVersioningWithResponse(ctx, "logs", adminapi.SetStorageBucketVersioningJSONRequestBody{Status: adminapi.SetStorageBucketVersioningRequestStatusEnabled})
			return r.StatusCode(), err
		},
	} {
		code, err := status()
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, code)
	}
}

func TestStorageKeys_IssuedKeysSignUntilDeleted(t *testing.T) {
	env, c := startStorage(t)
	ctx := context.Background()
	description := "backup job"
	created, err := c.CreateStorageKeyWithResponse(ctx, adminapi.CreateStorageKeyJSONRequestBody{Description: &description})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), "%s", created.Body)
	key := created.JSON201
	assert.NotEmpty(t, key.Secret)

	list, err := c.ListStorageKeysWithResponse(ctx)
	require.NoError(t, err)
	require.Len(t, list.JSON200.Keys, 2)
	assert.Equal(t, key.KeyId, list.JSON200.Keys[1].KeyId)
	assert.Equal(t, "backup job", list.JSON200.Keys[1].Description)
	assert.NotContains(t, string(list.Body), key.Secret, "secrets are shown once")

	// The key signs requests of the storage API.
	client := tenantapi.NewStorage(t, env.URL, storage.DefaultRegion, key.KeyId, key.Secret, time.Now)
	require.NoError(t, client.DeleteLifecycle(ctx, storagetest.Bucket))

	del, err := c.DeleteStorageKeyWithResponse(ctx, key.KeyId)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, del.StatusCode())
	err = client.DeleteLifecycle(ctx, storagetest.Bucket)
	var er *tenantapi.AnswerError
	require.ErrorAs(t, err, &er)
	var doc storageapi.Error
	require.NoError(t, xml.Unmarshal(er.Body, &doc), "%s", er.Body)
	assert.Equal(t, storageapi.ErrorCodeInvalidAccessKeyId, doc.Code)

	del, err = c.DeleteStorageKeyWithResponse(ctx, key.KeyId)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, del.StatusCode())
}

func TestStorageOperations_WithoutAStorageServerAreNotFound(t *testing.T) {
	url := serveAdmin(t, admin.Config{Token: adminToken, PAM: pamtest.Start(t, pamtest.Options{}).Operator})
	c, err := adminapi.NewClientWithResponses(url, adminapi.WithRequestEditorFn(withAdminToken))
	require.NoError(t, err)
	resp, err := c.ListStorageBucketsWithResponse(context.Background())
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode())
}

func TestStorageAccounts_BucketsAndKeysCarryTheirAccount(t *testing.T) {
	env, c := startStorage(t)
	ctx := context.Background()
	tenant := "tenant-b"

	bucket, err := c.CreateStorageBucketWithResponse(ctx, adminapi.CreateStorageBucketJSONRequestBody{Name: "b-logs", Account: &tenant})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, bucket.StatusCode(), "%s", bucket.Body)
	assert.Equal(t, tenant, bucket.JSON201.Account)
	plain, err := c.CreateStorageBucketWithResponse(ctx, adminapi.CreateStorageBucketJSONRequestBody{Name: "a-logs"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, plain.StatusCode(), "%s", plain.Body)
	assert.Equal(t, storage.DefaultAccount, plain.JSON201.Account, "no account named is the default one")

	key, err := c.CreateStorageKeyWithResponse(ctx, adminapi.CreateStorageKeyJSONRequestBody{Account: &tenant})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, key.StatusCode(), "%s", key.Body)
	assert.Equal(t, tenant, key.JSON201.Account)
	keys, err := c.ListStorageKeysWithResponse(ctx)
	require.NoError(t, err)
	accounts := map[string]string{}
	for _, k := range keys.JSON200.Keys {
		accounts[k.KeyId] = k.Account
	}
	assert.Equal(t, map[string]string{env.Key.KeyID: storage.DefaultAccount, key.JSON201.KeyId: tenant}, accounts)
}
