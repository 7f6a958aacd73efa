package storage_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

func TestDeleteLifecycle_UnknownBucketIsNoSuchBucket(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	del, err := generated(t, env, fake.Now).DeleteLifecycleWithResponse(context.Background(), "no-such-bucket", &storageapi.DeleteLifecycleParams{})
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, del.StatusCode(), "%s", del.Body)
	assert.Equal(t, storageapi.ErrorCodeNoSuchBucket, errorOf(t, del.Body).Code)
}

func TestDeleteLifecycle_MalformedBucketNameIsInvalidArgument(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	del, err := generated(t, env, fake.Now).DeleteLifecycleWithResponse(context.Background(), "No_Such.Bucket", &storageapi.DeleteLifecycleParams{})
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, del.StatusCode(), "%s", del.Body)
	assert.Equal(t, storageapi.ErrorCodeInvalidArgument, errorOf(t, del.Body).Code)
}

func TestPutLifecycle_ABodyThatIsNotXMLIsRefused415(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	put, err := generated(t, env, fake.Now).PutLifecycleWithBodyWithResponse(context.Background(), storagetest.Bucket,
		&storageapi.PutLifecycleParams{}, "text/plain", strings.NewReader("expire everything"))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnsupportedMediaType, put.StatusCode(), "%s", put.Body)
}
