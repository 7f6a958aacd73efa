package storage_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

func TestDeleteLifecycle_ABucketNamedWrongOrUnknownIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, bucket string
		status       int
		code         storageapi.ErrorCode
	}{
		{"unknown bucket is NoSuchBucket", "no-such-bucket", http.StatusNotFound, storageapi.ErrorCodeNoSuchBucket},
		{"malformed name is InvalidArgument", "No_Such.Bucket", http.StatusBadRequest, storageapi.ErrorCodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := startLifecycle(t)
			del, err := c.DeleteLifecycleWithResponse(context.Background(), tc.bucket, &storageapi.DeleteLifecycleParams{})
			require.NoError(t, err)
			require.Equal(t, tc.status, del.StatusCode(), "%s", del.Body)
			assert.Equal(t, tc.code, errorOf(t, del.Body).Code)
		})
	}
}

func TestPutLifecycle_ABodyThatIsNotXMLIsRefused415(t *testing.T) {
	_, c := startLifecycle(t)
	put, err := c.PutLifecycleWithBodyWithResponse(context.Background(), storagetest.Bucket,
		&storageapi.PutLifecycleParams{}, "text/plain", strings.NewReader("expire everything"))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnsupportedMediaType, put.StatusCode(), "%s", put.Body)
}

// A database that fails answers 500 InternalError on every operation, with
// no detail of the failure, whether it fails while the access key is read
// or later: the caller is not to blame. One that is gone answers 503
// ServiceUnavailable with Retry-After.
func TestLifecycle_AFailingDatabaseAnswers500WithoutItsDetail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fail   func(t *testing.T, env *storagetest.Env)
		status int
		code   storageapi.ErrorCode
	}{
		{"tables gone", func(t *testing.T, env *storagetest.Env) { testdb.DropTables(t, env.DB) }, http.StatusInternalServerError, storageapi.ErrorCodeInternalError},
		{"database gone", func(t *testing.T, env *storagetest.Env) { require.NoError(t, env.DB.Close()) }, http.StatusServiceUnavailable, storageapi.ErrorCodeServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) { failingDatabase(t, tc.fail, tc.status, tc.code) })
	}
}

func failingDatabase(t *testing.T, fail func(t *testing.T, env *storagetest.Env), status int, code storageapi.ErrorCode) {
	env, c := startLifecycle(t)
	fail(t, env)

	put := putCorpus(t, c, storagetest.Bucket, "valid", "expire-days-filter-prefix")
	get := getLifecycle(t, c, storagetest.Bucket)
	del, err := c.DeleteLifecycleWithResponse(context.Background(), storagetest.Bucket, &storageapi.DeleteLifecycleParams{})
	require.NoError(t, err)
	for name, r := range map[string]struct {
		status int
		body   []byte
	}{"PUT": {put.StatusCode(), put.Body}, "GET": {get.StatusCode(), get.Body}, "DELETE": {del.StatusCode(), del.Body}} {
		assert.Equal(t, status, r.status, "%s: %s", name, r.body)
		e := errorOf(t, r.body)
		assert.Equal(t, code, e.Code, name)
		assert.NotContains(t, string(r.body), "sql", "%s: the failure's detail stays in the log", name)
	}
}
