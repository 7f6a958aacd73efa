package storage_test

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// Two replicas on one PostgreSQL schema, given the same master key: a key
// created through one signs requests to the other, what one stores the other
// answers, and a key deleted through one stops working on the other once
// that one heard the commit (the notification's delivery; sqldb.Sync waits
// for it).
func TestReplicas_AKeyWorksOnEveryReplicaUntilDeletedThroughAny(t *testing.T) {
	fake := clock.NewFake(start)
	a, b := testdb.OpenSchemaTwice(t, storage.API.Migrations())
	masterKey, err := storage.LoadOrCreateMasterKey(filepath.Join(t.TempDir(), "storage-master.key"))
	require.NoError(t, err)
	var replicas [2]*storagetest.Env
	for i, db := range []*sql.DB{a, b} {
		srv, err := storage.New(storage.Config{
			Deps: storage.Deps{DB: db, Clock: fake, ValidateResponses: true, OnResponseViolation: func(r *http.Request, status int, err error) {
				t.Errorf("replica %d: response %d to %s %s breaks the spec: %v", i+1, status, r.Method, r.URL, err)
			}, Logger: slog.New(slog.DiscardHandler)},
			MasterKey: masterKey,
		})
		require.NoError(t, err)
		url := stacktest.HTTP(t, srv)
		replicas[i] = &storagetest.Env{URL: url, Server: srv, Operator: srv.Operator(), DB: db}
	}
	ctx := context.Background()
	key, err := replicas[0].Operator.CreateKey(ctx, storagetest.Account, "replicated")
	require.NoError(t, err)
	_, err = replicas[0].Operator.CreateBucket(ctx, storagetest.Account, storagetest.Bucket, storage.Unversioned)
	require.NoError(t, err)
	for _, r := range replicas {
		r.Key = key
	}
	c1, c2 := generated(t, replicas[0], fake.Now), generated(t, replicas[1], fake.Now)

	ct, body := xmlBody(corpusFile(t, "valid", "expire-days-filter-prefix"))
	put, err := c2.PutLifecycleWithBodyWithResponse(ctx, storagetest.Bucket, &storageapi.PutLifecycleParams{}, ct, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)
	got, err := c1.GetLifecycleWithResponse(ctx, storagetest.Bucket, &storageapi.GetLifecycleParams{})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), "%s", got.Body)
	require.Len(t, got.XML200.Rules, 1)

	require.NoError(t, replicas[0].Operator.DeleteKey(ctx, key.KeyID))
	require.NoError(t, sqldb.Sync(ctx, b))
	got, err = c2.GetLifecycleWithResponse(ctx, storagetest.Bucket, &storageapi.GetLifecycleParams{})
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, got.StatusCode(), "a key deleted through replica 1 is refused by replica 2: %s", got.Body)
}
