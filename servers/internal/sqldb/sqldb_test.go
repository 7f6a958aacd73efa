package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

func open(t *testing.T) *sqldb.DB {
	t.Helper()
	raw, err := sqlitedb.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), fstest.MapFS{
		"00001_init.sql": {Data: []byte("-- +goose Up\nCREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL);\n")},
	})
	require.NoError(t, err)
	db := sqldb.New(raw, sqldb.Options{SerializeWrites: true})
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestDB_CommittedWritesCallOnCommitAndRollbacksDoNot(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	var commits atomic.Int32
	db.OnCommit(func() { commits.Add(1) })

	_, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, "a", 1)
	require.NoError(t, err)
	assert.Equal(t, int32(1), commits.Load(), "an autocommitted write")

	_, err = db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, "a", 2)
	require.Error(t, err, "a duplicate key")
	assert.Equal(t, int32(1), commits.Load(), "a failed write changes nothing")

	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, "b", 2)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	assert.Equal(t, int32(1), commits.Load(), "a rolled back transaction")

	tx, err = db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, "c", 3)
	require.NoError(t, err)
	var v int
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = ?`, "c").Scan(&v))
	assert.Equal(t, 3, v, "the transaction reads its own write")
	require.NoError(t, tx.Commit())
	assert.Equal(t, int32(2), commits.Load(), "a committed transaction")
	assert.ErrorIs(t, tx.Rollback(), sql.ErrTxDone, "rollback after commit is a no-op")
}

func TestDB_StatementsAreReusedAndReportTheirErrors(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	for i := range 50 {
		_, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, string(rune('a'+i%26))+string(rune('a'+i/26)), i)
		require.NoError(t, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT COUNT(*), SUM(v) FROM kv`)
	require.NoError(t, err)
	require.True(t, rows.Next())
	var n, sum int
	require.NoError(t, rows.Scan(&n, &sum))
	require.NoError(t, rows.Close())
	assert.Equal(t, 50, n)
	assert.Equal(t, 49*50/2, sum)

	err = db.QueryRowContext(ctx, `SELECT nope FROM kv`).Scan(&n)
	assert.ErrorContains(t, err, "prepare", "a statement that does not prepare is an error, not a panic")
	_, err = db.ExecContext(ctx, `INSERT INTO nowhere VALUES (1)`)
	assert.Error(t, err)
}

// Writers queue in Go: concurrent transactions that read, then write, all
// commit, and none fails with SQLITE_BUSY.
func TestDB_ConcurrentWritersAllCommit(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ('n', 0)`)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					errs <- err
					return
				}
				var v int
				if err := tx.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = 'n'`).Scan(&v); err != nil {
					errs <- errors.Join(err, tx.Rollback())
					return
				}
				if _, err := tx.ExecContext(ctx, `UPDATE kv SET v = ? WHERE k = 'n'`, v+1); err != nil {
					errs <- errors.Join(err, tx.Rollback())
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var v int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = 'n'`).Scan(&v))
	assert.Equal(t, 64, v, "no increment lost")
}
