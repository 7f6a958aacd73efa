package storage_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

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
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	c := generated(t, env, fake.Now)
	ctx := context.Background()
	fail(t, env)

	ct, body := xmlBody(corpusFile(t, "valid", "expire-days-filter-prefix"))
	put, err := c.PutLifecycleWithBodyWithResponse(ctx, storagetest.Bucket, &storageapi.PutLifecycleParams{}, ct, body)
	require.NoError(t, err)
	get, err := c.GetLifecycleWithResponse(ctx, storagetest.Bucket, &storageapi.GetLifecycleParams{})
	require.NoError(t, err)
	del, err := c.DeleteLifecycleWithResponse(ctx, storagetest.Bucket, &storageapi.DeleteLifecycleParams{})
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
