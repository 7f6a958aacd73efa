package storage_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// An access key's secret is cached after its first use; deleting the key
// must still refuse its very next request.
func TestKeys_ADeletedKeyIsRefusedOnTheNextRequestEvenAfterUse(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	c := generated(t, env, fake.Now)
	ctx := context.Background()
	for range 2 {
		ct, body := xmlBody(corpusFile(t, "valid", "expire-days-filter-prefix"))
		put, err := c.PutLifecycleWithBodyWithResponse(ctx, storagetest.Bucket, &storageapi.PutLifecycleParams{}, ct, body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)
	}
	require.NoError(t, env.Server.DeleteKey(ctx, env.Key.KeyID))

	got, err := c.GetLifecycleWithResponse(ctx, storagetest.Bucket, &storageapi.GetLifecycleParams{})
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, got.StatusCode(), "%s", got.Body)
	assert.Equal(t, storageapi.ErrorCodeInvalidAccessKeyId, errorOf(t, got.Body).Code)
}
