package pam

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
)

// tokenDB is a PAM database of the run's backend; the token batches are
// PostgreSQL's, so the tests of them run on a PostgreSQL test run only.
func tokenDB(t *testing.T) *sqldb.DB {
	t.Helper()
	if testdb.Current() != testdb.Postgres {
		t.Skip("token batches are PostgreSQL's (APISTACK_TEST_BACKEND=postgres)")
	}
	return sqldb.New(testdb.Open(t, testdb.Migrations(API.Migrations())), sqldb.Options{})
}

// storedTokens reads the stored tokens by hash: key, user, team, created
// and expiry instants.
func storedTokens(t *testing.T, db *sqldb.DB) map[string][5]any {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT hash, key_id, user_id, team_id, created_at, expires_at FROM tokens`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string][5]any{}
	for rows.Next() {
		var hash []byte
		var key, user, team string
		var created, expires int64
		require.NoError(t, rows.Scan(&hash, &key, &user, &team, &created, &expires))
		out[string(hash)] = [5]any{key, user, team, created, expires}
	}
	require.NoError(t, rows.Err())
	return out
}

// Concurrent inserts each store their own token, whichever batch they
// join, and each returns only once its token is there.
func TestTokenBatches_EachInsertStoresItsTokenOnce(t *testing.T) {
	db := tokenDB(t)
	s := &store{db: db}
	now := time.UnixMicro(1_800_000_000_000_000)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k := keyRecord{ID: fmt.Sprintf("key-%d", i), UserID: fmt.Sprintf("user-%d", i%3), TeamID: "team"}
			hash := []byte(fmt.Sprintf("hash-%02d", i))
			assert.NoError(t, s.insertToken(context.Background(), hash, k, now.Add(time.Duration(i)), now.Add(time.Hour)))
			var stored int
			assert.NoError(t, db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM tokens WHERE hash = ?`, hash).Scan(&stored))
			assert.Equal(t, 1, stored, "the token is committed when its insert returns")
		})
	}
	wg.Wait()
	got := storedTokens(t, db)
	require.Len(t, got, n)
	for i := range n {
		assert.Equal(t, [5]any{fmt.Sprintf("key-%d", i), fmt.Sprintf("user-%d", i%3), "team",
			now.Add(time.Duration(i)).UnixMicro(), now.Add(time.Hour).UnixMicro()}, got[fmt.Sprintf("hash-%02d", i)], i)
	}
}

// A batch PostgreSQL refuses runs each of its members alone: only the
// member at fault fails.
func TestTokenBatches_ARefusedBatchRunsEachMemberAlone(t *testing.T) {
	db := tokenDB(t)
	now := time.UnixMicro(1_800_000_000_000_000)
	k := keyRecord{ID: "key", UserID: "user", TeamID: "team"}
	taken := &pendingToken{hash: []byte("taken"), key: k, now: now, expires: now.Add(time.Hour)}
	require.Equal(t, []error{nil}, commitTokens(context.Background(), db, []*pendingToken{taken}))
	batch := []*pendingToken{
		{hash: []byte("first"), key: k, now: now, expires: now.Add(time.Hour)},
		{hash: []byte("taken"), key: k, now: now.Add(time.Second), expires: now.Add(2 * time.Hour)}, // its hash is stored already
		{hash: []byte("last"), key: k, now: now, expires: now.Add(time.Hour)},
	}
	errs := commitTokens(context.Background(), db, batch)
	require.Len(t, errs, 3)
	assert.NoError(t, errs[0])
	assert.ErrorContains(t, errs[1], "duplicate key")
	assert.NoError(t, errs[2])
	got := storedTokens(t, db)
	assert.Len(t, got, 3)
	assert.Equal(t, now.UnixMicro(), got["taken"][3], "the token stored first is left as it was")
}
