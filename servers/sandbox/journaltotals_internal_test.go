package sandbox

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
)

// Migration 00080 fills each sandbox's journal totals from the journal rows
// it already has: what its budget is then kept by.
func TestJournalTotals_MigrationCountsTheRowsThere(t *testing.T) {
	ctx := context.Background()
	set := Migrations()
	if testdb.Current() == testdb.Postgres {
		set = PostgresMigrations()
	}
	text, err := fs.ReadFile(set, "00080_journal_totals.sql")
	require.NoError(t, err)
	up, _, _ := strings.Cut(string(text), "-- +goose Down")
	_, fill, ok := strings.Cut(up, "UPDATE sandboxes SET")
	require.True(t, ok, "00080 fills the totals:\n%s", up)
	fill, _, ok = strings.Cut(fill, ";")
	require.True(t, ok)

	db := sqldb.New(testdb.Open(t, testdb.Migrations{Schema: "sandbox", SQLite: Migrations(), Postgres: PostgresMigrations()}), sqldb.Options{})
	for _, id := range []string{"sbx-full", "sbx-empty"} {
		_, err := db.ExecContext(ctx, `INSERT INTO sandboxes (id, token_hash, clock, ttl_micros, state, created_at, last_used_at)
			VALUES (?, ?, 'frozen', 3600000000, 'ready', 0, 0)`, id, []byte(id))
		require.NoError(t, err)
	}
	for i, n := range []int{3, 1, 5} {
		_, err := db.ExecContext(ctx, `INSERT INTO journal_batches (sandbox_id, entries, last_at, data) VALUES ('sbx-full', ?, ?, ?)`,
			n, i, []byte(strings.Repeat("x", 10*(i+1))))
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, `UPDATE sandboxes SET journal_entries = 99, journal_bytes = 99`)
	require.NoError(t, err)

	_, err = db.ExecContext(ctx, "UPDATE sandboxes SET"+fill)
	require.NoError(t, err)
	for id, want := range map[string][2]int64{"sbx-full": {9, 60}, "sbx-empty": {0, 0}} {
		var got [2]int64
		require.NoError(t, db.QueryRowContext(ctx, `SELECT journal_entries, journal_bytes FROM sandboxes WHERE id = ?`, id).Scan(&got[0], &got[1]))
		assert.Equal(t, want, got, id)
	}
}
