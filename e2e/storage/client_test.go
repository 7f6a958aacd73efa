package storage_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/protocol/contract"
	storageserver "github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

var start = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// fixedClock is the server's clock in these tests: always start.
type fixedClock struct{}

func (fixedClock) Now() time.Time { return start }

// newClient returns a client of env whose every request and response is checked
// against the spec on the client's side too.
func newClient(t *testing.T, env *storagetest.Env, now func() time.Time, virtualHost bool) *storage.Client {
	t.Helper()
	rt, err := contract.ForAPI(contract.Storage, http.DefaultTransport)
	require.NoError(t, err)
	cfg := storage.Config{
		Endpoint: env.URL, Region: storageserver.DefaultRegion, KeyID: env.Key.KeyID, Secret: env.Key.Secret,
		Transport: rt, Now: now,
	}
	if virtualHost {
		cfg.VirtualHostDomain = storageserver.DefaultDomain
	}
	c, err := storage.New(cfg)
	require.NoError(t, err)
	return c
}

func TestClient_PutGetDeleteLifecycle(t *testing.T) {
	fake := fixedClock{}
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	ctx := context.Background()
	for _, virtualHost := range []bool{false, true} {
		c := newClient(t, env, fake.Now, virtualHost)
		want := storage.Configuration(
			storage.ExpireAfterDays("logs", "logs/", 30),
			storage.ExpireOn("archive", "archive/", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)),
			storage.AbortIncompleteUploadsAfterDays("uploads", "", 7),
		)
		require.NoError(t, c.PutLifecycle(ctx, storagetest.Bucket, want))
		got, err := c.GetLifecycle(ctx, storagetest.Bucket)
		require.NoError(t, err)
		assert.Equal(t, want.Rules, got.Rules)
		require.NoError(t, c.DeleteLifecycle(ctx, storagetest.Bucket))
		_, err = c.GetLifecycle(ctx, storagetest.Bucket)
		var er *storage.Error
		require.ErrorAs(t, err, &er)
		assert.Equal(t, storage.ErrorCodeNoSuchLifecycleConfiguration, er.Code)
		assert.Equal(t, http.StatusNotFound, er.StatusCode)
		assert.NotEmpty(t, er.RequestID)
	}
}

func TestClient_VersionedBucket(t *testing.T) {
	fake := fixedClock{}
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	c := newClient(t, env, fake.Now, false)
	ctx := context.Background()
	cfg := storage.Configuration(storage.ExpireNoncurrentAfterDays("old", "", 30, 2))
	require.NoError(t, c.PutLifecycle(ctx, storagetest.VersionedBucket, cfg))

	err := c.PutLifecycle(ctx, storagetest.Bucket, cfg)
	var er *storage.Error
	require.ErrorAs(t, err, &er)
	assert.Equal(t, storage.ErrorCodeInvalidArgument, er.Code)
	assert.Contains(t, er.Message, "NoncurrentVersionExpiration")
}

func TestClient_ErrorsAreTyped(t *testing.T) {
	fake := fixedClock{}
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	ctx := context.Background()

	_, err := newClient(t, env, fake.Now, false).GetLifecycle(ctx, "no-such-bucket")
	var er *storage.Error
	require.ErrorAs(t, err, &er)
	assert.Equal(t, storage.ErrorCodeNoSuchBucket, er.Code)

	slow := newClient(t, env, func() time.Time { return start.Add(-time.Hour) }, false)
	err = slow.DeleteLifecycle(ctx, storagetest.Bucket)
	require.ErrorAs(t, err, &er)
	assert.Equal(t, storage.ErrorCodeRequestTimeTooSkewed, er.Code)

	wrong, err := storage.New(storage.Config{Endpoint: env.URL, Region: storageserver.DefaultRegion, KeyID: env.Key.KeyID, Secret: "wrong", Now: fake.Now})
	require.NoError(t, err)
	err = wrong.DeleteLifecycle(ctx, storagetest.Bucket)
	require.ErrorAs(t, err, &er)
	assert.Equal(t, storage.ErrorCodeSignatureDoesNotMatch, er.Code)
	assert.True(t, errors.As(err, &er))
}

func TestNew_RequiresTheAddressAndTheKey(t *testing.T) {
	_, err := storage.New(storage.Config{Endpoint: "http://127.0.0.1:8083"})
	assert.Error(t, err)
}
