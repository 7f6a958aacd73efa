package sqlitedb_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

func TestOpen_SynchronousFollowsTheOption(t *testing.T) {
	migrations := fstest.MapFS{"00001_init.sql": {Data: []byte("-- +goose Up\nCREATE TABLE t (x INTEGER);\n")}}
	for _, tc := range []struct {
		name string
		opts []sqlitedb.Option
		want int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{
		{"default: durable against a process crash", nil, 1},
		{"full sync: durable against power loss", []sqlitedb.Option{sqlitedb.WithFullSync(true)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sqlitedb.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), migrations, tc.opts...)
			require.NoError(t, err)
			defer db.Close()
			var mode int
			var journal string
			require.NoError(t, db.QueryRow(`PRAGMA synchronous`).Scan(&mode))
			require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&journal))
			assert.Equal(t, tc.want, mode)
			assert.Equal(t, "wal", journal)
		})
	}
}
