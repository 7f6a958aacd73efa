package sqldb_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// holdWriter starts a transaction that holds the SQLite writer until the
// returned func is called, so that the writes started meanwhile queue and
// commit in one batch.
func holdWriter(t *testing.T, db *sqldb.DB) (release func()) {
	t.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	return func() { require.NoError(t, tx.Rollback()) }
}

// kv reads the table kv whole, each key's value.
func kv(t *testing.T, db *sqldb.DB) map[string]int {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT k, v FROM kv`)
	require.NoError(t, err)
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var k string
		var v int
		require.NoError(t, rows.Scan(&k, &v))
		got[k] = v
	}
	require.NoError(t, rows.Err())
	return got
}

// Concurrent writes queued behind the writer commit together, yet each gets
// its own outcome: a refused insert (a duplicate key) and a transaction
// whose function fails are undone alone, and every other write is
// committed.
func TestGroupCommit_EachWriteOfABatchKeepsItsOwnOutcome(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ('taken', 0)`)
	require.NoError(t, err)
	var commits atomic.Int32
	db.OnCommit(func() { commits.Add(1) })

	release := holdWriter(t, db)
	const n = 12
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			switch i % 3 {
			case 0: // a plain insert
				_, errs[i] = db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i)
			case 1: // a duplicate key: refused alone
				_, errs[i] = db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ('taken', ?)`, i)
			case 2: // a transaction that writes, then fails: none of it stays
				errs[i] = db.InTx(ctx, func(tx *sqldb.Tx) error {
					if _, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i); err != nil {
						return err
					}
					return errors.New("changed my mind")
				})
			}
		})
	}
	// Every write is on its way before the writer is let go.
	require.Eventually(t, func() bool { return sqldb.PendingWrites(db) == n }, 10*time.Second, time.Millisecond)
	release()
	wg.Wait()

	for i, err := range errs {
		switch i % 3 {
		case 0:
			assert.NoError(t, err, "write %d", i)
		case 1:
			assert.ErrorContains(t, err, "UNIQUE", "write %d", i)
		case 2:
			assert.EqualError(t, err, "changed my mind", "write %d", i)
		}
	}
	got := kv(t, db)
	want := map[string]int{"taken": 0}
	for i := 0; i < n; i += 3 {
		want[fmt.Sprint("k", i)] = i
	}
	assert.Equal(t, want, got, "the plain inserts, and nothing of the refused writes")
	assert.GreaterOrEqual(t, commits.Load(), int32(1))
	assert.Less(t, commits.Load(), int32(n/3), "the queued writes committed in fewer commits than the writes that succeeded")
}

// A write returns only once it is committed: what it wrote is read back
// from a new handle on the file the moment it returns.
func TestGroupCommit_AWriteIsCommittedWhenItReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	migrations := fstest.MapFS{
		"00001_init.sql": {Data: []byte("-- +goose Up\nCREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL);\n")},
	}
	ctx := context.Background()
	raw, err := sqlitedb.Open(ctx, path, migrations)
	require.NoError(t, err)
	db := sqldb.New(raw, sqldb.Options{SerializeWrites: true})
	defer db.Close()
	other, err := sqlitedb.Open(ctx, path, migrations)
	require.NoError(t, err)
	defer other.Close()

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			err := db.InTx(ctx, func(tx *sqldb.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i)
				return err
			})
			if !assert.NoError(t, err) {
				return
			}
			var v int
			assert.NoError(t, other.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = ?`, fmt.Sprint("k", i)).Scan(&v))
			assert.Equal(t, i, v)
		})
	}
	wg.Wait()
}

// A write's function runs in the batch's transaction: it cannot end it, and
// its panic reaches its own caller, its writes undone, while the other
// writes of the batch commit.
func TestGroupCommit_AWriteCannotEndTheBatchAndItsPanicIsItsOwn(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	release := holdWriter(t, db)
	var wg sync.WaitGroup
	var commitErr, rollbackErr, otherErr error
	var panicked any
	wg.Go(func() {
		otherErr = db.InTx(ctx, func(tx *sqldb.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ('kept', 1)`)
			return err
		})
	})
	wg.Go(func() {
		defer func() { panicked = recover() }()
		_ = db.InTx(ctx, func(tx *sqldb.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ('undone', 2)`); err != nil {
				return err
			}
			commitErr, rollbackErr = tx.Commit(), tx.Rollback()
			panic("boom")
		})
	})
	require.Eventually(t, func() bool { return sqldb.PendingWrites(db) == 2 }, 10*time.Second, time.Millisecond)
	release()
	wg.Wait()

	assert.Equal(t, "boom", panicked, "the panic reaches the write's caller")
	assert.Error(t, commitErr, "a write cannot commit the batch")
	assert.Error(t, rollbackErr, "a write cannot roll the batch back")
	require.NoError(t, otherErr)
	assert.Equal(t, map[string]int{"kept": 1}, kv(t, db))
}

// A write whose context ended before its batch started is not run: it
// waits behind a batch that holds the group commit (itself waiting for the
// writer), is given up, and the next batch leaves it out.
func TestGroupCommit_AWriteGivenUpBeforeItsBatchIsNotCommitted(t *testing.T) {
	db := open(t)
	release := holdWriter(t, db)
	first := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(context.Background(), `INSERT INTO kv (k, v) VALUES ('first', 1)`)
		first <- err
	}()
	// The first write's batch is on its way (taken from the queue), held
	// by the writer, so the next write queues for the batch after it.
	require.Eventually(t, func() bool { return sqldb.PendingWrites(db) == 1 && sqldb.QueuedWrites(db) == 0 },
		10*time.Second, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	late := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ('late', 2)`)
		late <- err
	}()
	require.Eventually(t, func() bool { return sqldb.QueuedWrites(db) == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	release()
	require.NoError(t, <-first)
	require.ErrorIs(t, <-late, context.Canceled)
	assert.Equal(t, map[string]int{"first": 1}, kv(t, db), "the write given up was not run")
}

// A transaction waiting for the SQLite writer gives up when its context
// ends, with the context's error, and leaves the writer to those after it:
// a request its client abandoned does not wait out the writes before it.
func TestBeginTx_AWaitForTheWriterEndsWithItsContext(t *testing.T) {
	db := open(t)
	release := holdWriter(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		tx, err := db.BeginTx(ctx, nil)
		if err == nil {
			_ = tx.Rollback()
		}
		waited <- err
	}()
	cancel()
	err := <-waited
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "wait for the SQLite writer")

	release()
	tx, err := db.BeginTx(context.Background(), nil)
	require.NoError(t, err, "the writer is free once its holder is done: the abandoned wait took nothing")
	require.NoError(t, tx.Rollback())
}

// A quiet write (QuietExecContext, or a transaction: QuietInTx) runs no
// OnCommit hooks: alone, or in a batch of quiet writes only. A batch that
// commits another write too runs them once, as any batch.
func TestQuietWrites_RunNoOnCommitHooksOfTheirOwn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(ctx context.Context, db *sqldb.DB, quiet bool, k string) error
	}{
		{"a statement", func(ctx context.Context, db *sqldb.DB, quiet bool, k string) error {
			exec := db.ExecContext
			if quiet {
				exec = db.QuietExecContext
			}
			_, err := exec(ctx, `INSERT INTO kv (k, v) VALUES (?, 1)`, k)
			return err
		}},
		{"a transaction", func(ctx context.Context, db *sqldb.DB, quiet bool, k string) error {
			inTx := db.InTx
			if quiet {
				inTx = db.QuietInTx
			}
			return inTx(ctx, func(tx *sqldb.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (?, 1)`, k)
				return err
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			var commits atomic.Int32
			db.OnCommit(func() { commits.Add(1) })

			require.NoError(t, tc.write(ctx, db, true, "alone"))
			assert.Equal(t, int32(0), commits.Load(), "a quiet write alone")

			batch := func(n int, quiet func(i int) bool) {
				t.Helper()
				release := holdWriter(t, db)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						assert.NoError(t, tc.write(ctx, db, quiet(i), fmt.Sprint("k", n, "-", i)))
					})
				}
				require.Eventually(t, func() bool { return sqldb.PendingWrites(db) == n }, 10*time.Second, time.Millisecond)
				release()
				wg.Wait()
			}
			batch(6, func(int) bool { return true })
			assert.Equal(t, int32(0), commits.Load(), "a batch of quiet writes")
			batch(5, func(i int) bool { return i != 2 })
			assert.Equal(t, int32(1), commits.Load(), "a batch with one write that is not quiet")
			assert.Len(t, kv(t, db), 1+6+5, "every write committed")
		})
	}
}
