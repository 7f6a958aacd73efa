package testdb

import (
	"context"
	"sync"
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

// Transactions of one schema run one at a time on PostgreSQL, as on SQLite:
// a read-modify-write under concurrency loses no update.
func TestBeginTx_PostgresTransactionsOfASchemaQueue(t *testing.T) {
	db := sqldb.New(OpenOn(t, Postgres, Migrations{Schema: "notes", SQLite: notes, Postgres: notes}), sqldb.Options{})
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('c', '', 0)`)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				tx, err := db.BeginTx(ctx, nil)
				if !assert.NoError(t, err) {
					return
				}
				var n int64
				assert.NoError(t, tx.QueryRowContext(ctx, `SELECT n FROM notes WHERE id = 'c'`).Scan(&n))
				_, err = tx.ExecContext(ctx, `UPDATE notes SET n = ? WHERE id = 'c'`, n+1)
				assert.NoError(t, err)
				assert.NoError(t, tx.Commit())
			}
		})
	}
	wg.Wait()
	var n int64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT n FROM notes WHERE id = 'c'`).Scan(&n))
	assert.Equal(t, int64(80), n)
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
