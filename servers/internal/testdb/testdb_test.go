package testdb

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

var notes = fstest.MapFS{"00001_notes.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, n BIGINT NOT NULL);
-- +goose Down
DROP TABLE notes;
`)}}

func TestOpen_BothBackendsRunTheSameSQL(t *testing.T) {
	for _, b := range []Backend{SQLite, Postgres} {
		t.Run(string(b), func(t *testing.T) {
			db := sqldb.New(OpenOn(t, b, Migrations{Schema: "notes", SQLite: notes, Postgres: notes}), sqldb.Options{SerializeWrites: true})
			ctx := context.Background()
			want := sqldb.SQLite
			if b == Postgres {
				want = sqldb.Postgres
			}
			assert.Equal(t, want, db.Dialect())
			assert.Equal(t, b == Postgres, db.Shared())

			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES (?, ?, ?)`, "a", "what? no", 1)
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
			var body string
			require.NoError(t, db.QueryRowContext(ctx, `SELECT body FROM notes WHERE id = ? AND body <> '?'`, "a").Scan(&body))
			assert.Equal(t, "what? no", body)
		})
	}
}

// On PostgreSQL, transactions run in parallel: a read-modify-write that
// locks its row (LockRows) loses no update under concurrency, a decision
// over many rows under a named lock (Lock) sees every earlier one, and two
// transactions on different rows do not wait for each other.
func TestBeginTx_PostgresTransactionsLockWhatTheyDecideOn(t *testing.T) {
	db := sqldb.New(OpenOn(t, Postgres, Migrations{Schema: "notes", SQLite: notes, Postgres: notes}), sqldb.Options{SerializeWrites: true})
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('c', '', 0), ('d', '', 0)`)
	require.NoError(t, err)
	// increment reads note id's n and writes it back plus one.
	increment := func(tx *sqldb.Tx, id string) error {
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT n FROM notes WHERE id = ?`, id).Scan(&n); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE notes SET n = ? WHERE id = ?`, n+1, id)
		return err
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 10 {
				assert.NoError(t, db.InTx(ctx, func(tx *sqldb.Tx) error {
					if i%2 == 0 {
						if _, err := tx.LockRows(ctx, `SELECT id FROM notes WHERE id = 'c'`); err != nil {
							return err
						}
						return increment(tx, "c")
					}
					if err := tx.Lock(ctx, "count"); err != nil {
						return err
					}
					return increment(tx, "d")
				}))
			}
		})
	}
	wg.Wait()
	for _, id := range []string{"c", "d"} {
		var n int64
		require.NoError(t, db.QueryRowContext(ctx, `SELECT n FROM notes WHERE id = ?`, id).Scan(&n))
		assert.Equal(t, int64(40), n, id)
	}

	// A transaction holding row c's lock does not hold up one writing d.
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.LockRows(ctx, `SELECT id FROM notes WHERE id = 'c'`)
	require.NoError(t, err)
	other, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = other.LockRows(ctx, `SELECT id FROM notes WHERE id = 'd'`)
	require.NoError(t, err, "a lock on another row does not wait")
	require.NoError(t, other.Commit())
	require.NoError(t, tx.Commit())
}

// InTx runs a transaction again when a concurrent one inserted the unique
// row it meant to insert, so its check runs again and decides on what is
// committed.
func TestInTx_AUniqueViolationRunsTheTransactionAgain(t *testing.T) {
	db := sqldb.New(OpenOn(t, Postgres, Migrations{Schema: "notes", SQLite: notes, Postgres: notes}), sqldb.Options{})
	ctx := context.Background()
	runs := 0
	err := db.InTx(ctx, func(tx *sqldb.Tx) error {
		runs++
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM notes WHERE id = 'u'`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return errExists
		}
		if runs == 1 {
			// A concurrent transaction inserts the row after the check.
			if _, err := db.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('u', 'first', 0)`); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('u', 'second', 0)`)
		return err
	})
	assert.ErrorIs(t, err, errExists)
	assert.Equal(t, 2, runs)
}

var errExists = errors.New("exists")

// A Pipeline is one transaction: its lock queues concurrent pipelines (a
// read-modify-write loses no update, each statement seeing what the lock's
// previous holder committed), a statement PostgreSQL refuses rolls back the
// statements before it, and a commit runs the OnCommit hooks. On SQLite it
// is refused.
func TestPipeline_IsOneTransactionWhoseLockQueuesTheOthers(t *testing.T) {
	m := Migrations{Schema: "notes", SQLite: notes, Postgres: notes}
	assert.ErrorIs(t, sqldb.New(OpenOn(t, SQLite, m), sqldb.Options{}).Pipeline(context.Background()), sqldb.ErrNoPipeline)

	db := sqldb.New(OpenOn(t, Postgres, m), sqldb.Options{})
	ctx := context.Background()
	var commits atomic.Int32
	db.OnCommit(func() { commits.Add(1) })
	_, err := db.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('c', '', 0)`)
	require.NoError(t, err)
	// Once the watcher listens (Sync), the hooks run for this pool's
	// commits alone.
	require.NoError(t, db.Sync(ctx))
	commits.Store(0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				var n int64
				assert.NoError(t, db.Pipeline(ctx,
					sqldb.Statement{SQL: `SELECT id FROM notes WHERE id = ? FOR UPDATE`, Args: []any{"c"}},
					sqldb.Statement{SQL: `UPDATE notes SET n = (SELECT n FROM notes WHERE id = ?) + 1 WHERE id = ? RETURNING n`,
						Args: []any{"c", "c"}, Scan: []any{&n}}))
				assert.Positive(t, n)
			}
		})
	}
	wg.Wait()
	var n int64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT n FROM notes WHERE id = 'c'`).Scan(&n))
	assert.Equal(t, int64(80), n, "no update lost")
	assert.Equal(t, int32(80), commits.Load(), "each commit runs the hooks")

	err = db.Pipeline(ctx,
		sqldb.Statement{SQL: `INSERT INTO notes (id, body, n) VALUES (?, '', 0)`, Args: []any{"d"}},
		sqldb.Statement{SQL: `INSERT INTO notes (id, body, n) VALUES (?, '', 0)`, Args: []any{"c"}})
	require.Error(t, err, "a duplicate key")
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM notes WHERE id = 'd'`).Scan(&n))
	assert.Zero(t, n, "the failed statement rolled back the one before it")
	assert.Equal(t, int32(80), commits.Load(), "a rollback runs no hook")
}

// Replicas starting together migrate once.
func TestPostgres_ConcurrentOpensMigrateOnce(t *testing.T) {
	url := NewDatabase(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			db, err := pgdb.Open(context.Background(), url, "notes", notes)
			if assert.NoError(t, err) {
				_ = db.Close()
			}
		})
	}
	wg.Wait()
}

// TryLock divides keys between concurrent transactions without waiting: a
// key another transaction holds is skipped until that one ends, a key of
// another name is not, and on SQLite (one transaction at a time) every key
// is taken.
func TestTryLock_ConcurrentTransactionsDivideTheKeys(t *testing.T) {
	for _, b := range []Backend{SQLite, Postgres} {
		t.Run(string(b), func(t *testing.T) {
			db := sqldb.New(OpenOn(t, b, Migrations{Schema: "notes", SQLite: notes, Postgres: notes}), sqldb.Options{})
			ctx := context.Background()
			first, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer first.Rollback()
			got, err := first.TryLock(ctx, "claim", []string{"a", "b", "c"})
			require.NoError(t, err)
			assert.Equal(t, []string{"a", "b", "c"}, got)
			if b == SQLite {
				return
			}
			second, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			defer second.Rollback()
			got, err = second.TryLock(ctx, "claim", []string{"d", "b", "e", "a"})
			require.NoError(t, err)
			assert.Equal(t, []string{"d", "e"}, got, "the keys the first holds are skipped, the order kept")
			got, err = second.TryLock(ctx, "other", []string{"a"})
			require.NoError(t, err)
			assert.Equal(t, []string{"a"}, got, "a key of another name is another lock")
			require.NoError(t, first.Commit())
			got, err = second.TryLock(ctx, "claim", []string{"a", "b"})
			require.NoError(t, err)
			assert.Equal(t, []string{"a", "b"}, got, "free once the first ended")
		})
	}
}

// The throwaway cluster flushes nothing unless it is asked to be durable
// (DurableVariable): then PostgreSQL's own defaults stand.
func TestServerArgs_DurableLeavesPostgreSQLsDefaults(t *testing.T) {
	settings := func(args []string) []string {
		var out []string
		for i, a := range args {
			if a == "-c" {
				out = append(out, args[i+1])
			}
		}
		return out
	}
	fast := settings(serverArgs("d", "s", false, false))
	assert.Subset(t, fast, []string{"fsync=off", "synchronous_commit=off", "full_page_writes=off"})
	durable := settings(serverArgs("d", "s", true, true))
	for _, s := range durable {
		for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
			assert.NotContains(t, s, name+"=", "durable: %s keeps its default", name)
		}
	}
	assert.Contains(t, durable, "shared_preload_libraries=pg_stat_statements")
	assert.Equal(t, settings(serverArgs("d", "s", false, false))[:3], durable[:3], "the same cluster otherwise")
}
