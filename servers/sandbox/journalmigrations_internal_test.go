package sandbox

import (
	"context"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
)

// migrationStatement is the statement of the sandbox migration file (as
// the current backend's set renders it) that starts with start, up to its
// semicolon.
func migrationStatement(t *testing.T, file, start string) string {
	t.Helper()
	set := Migrations()
	if testdb.Current() == testdb.Postgres {
		set = PostgresMigrations()
	}
	text, err := fs.ReadFile(set, file)
	require.NoError(t, err)
	up, _, _ := strings.Cut(string(text), "-- +goose Down")
	_, stmt, ok := strings.Cut(up, start)
	require.True(t, ok, "%s has no %q:\n%s", file, start, up)
	stmt, _, ok = strings.Cut(stmt, ";")
	require.True(t, ok)
	return start + stmt
}

// sandboxDB is a database of the sandbox schema on the run's backend (the
// journal's and the inbox's internal tests).
func sandboxDB(t *testing.T) *sqldb.DB {
	t.Helper()
	return sqldb.New(testdb.Open(t, testdb.Migrations{Schema: "sandbox", SQLite: Migrations(), Postgres: PostgresMigrations()}), sqldb.Options{})
}

// The per-entry table's rows, converted by migration 00040, read back as the
// entries they were (the stack's time standing for the sandbox's).
func TestJournalCodec_ReadsTheEntriesConvertedFromThePerEntryTable(t *testing.T) {
	ctx := context.Background()
	db := sandboxDB(t)
	blob, convert := "BLOB", migrationStatement(t, "00040_journal_batches.sql", "INSERT INTO journal_batches")
	if testdb.Current() == testdb.Postgres {
		blob = "BYTEA"
	}
	// The table as it was (migration 00001), with two entries.
	_, err := db.ExecContext(ctx, `CREATE TABLE journal (seq BIGINT PRIMARY KEY, sandbox_id TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
		api TEXT NOT NULL, operation TEXT NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, query TEXT NOT NULL, status INTEGER NOT NULL,
		at BIGINT NOT NULL, duration_micros BIGINT NOT NULL, request_headers TEXT NOT NULL, response_headers TEXT NOT NULL,
		request_body `+blob+` NOT NULL, request_truncated BOOLEAN NOT NULL, response_body `+blob+` NOT NULL, response_truncated BOOLEAN NOT NULL)`)
	require.NoError(t, err)
	at := time.Date(2026, 11, 20, 9, 30, 0, 123000, time.UTC)
	_, err = db.ExecContext(ctx, (`INSERT INTO sandboxes (id, token_hash, clock, ttl_micros, state, created_at, last_used_at)
		VALUES ('sbx-old', ?, 'frozen', 3600000000, 'ready', ?, ?)`), []byte{1, 2, 3}, at.UnixMicro(), at.UnixMicro())
	require.NoError(t, err)
	insert := (`INSERT INTO journal VALUES (?, 'sbx-old', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	_, err = db.ExecContext(ctx, insert, 7, "pam", "CreateGroup", "POST", "/v1/teams/t/groups", "", 201, at.UnixMicro(), 1500,
		`{"Authorization":["[redacted]"],"Content-Type":["application/json"]}`, `{"Location":["/v1/teams/t/groups/g"]}`,
		[]byte(`{"name":"payroll"}`), false, []byte{0xff, 0x00, 'x'}, true)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, insert, 9, "fax", "ListFaxes", "GET", "/v2/faxes", "page=2", 200, at.Add(time.Second).UnixMicro(), 20,
		`{}`, `{}`, []byte{}, false, []byte{}, false)
	require.NoError(t, err)

	_, err = db.ExecContext(ctx, convert)
	require.NoError(t, err)
	var got []apiserver.JournalEntry
	rows, err := db.QueryContext(ctx, `SELECT entries, last_at, data FROM journal_batches WHERE sandbox_id = 'sbx-old' ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var n int
		var last int64
		var data []byte
		require.NoError(t, rows.Scan(&n, &last, &data))
		entries, err := decodeEntries(data)
		require.NoError(t, err)
		require.Len(t, entries, n)
		assert.Equal(t, last, entries[0].Time.UnixMicro())
		got = append(got, entries...)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []apiserver.JournalEntry{
		{API: "pam", Operation: "CreateGroup", Method: "POST", Path: "/v1/teams/t/groups", Status: 201, Time: at, SetTime: at,
			Duration: 1500 * time.Microsecond, RequestHeaders: http.Header{"Authorization": {"[redacted]"}, "Content-Type": {"application/json"}},
			ResponseHeaders: http.Header{"Location": {"/v1/teams/t/groups/g"}}, RequestBody: []byte(`{"name":"payroll"}`),
			ResponseBody: []byte{0xff, 0x00, 'x'}, ResponseTruncated: true},
		{API: "fax", Operation: "ListFaxes", Method: "GET", Path: "/v2/faxes", Query: "page=2", Status: 200, Time: at.Add(time.Second),
			SetTime: at.Add(time.Second), Duration: 20 * time.Microsecond, RequestHeaders: http.Header{}, ResponseHeaders: http.Header{},
			RequestBody: []byte{}, ResponseBody: []byte{}},
	}, got)

	for name, data := range map[string]string{"not JSON": "\x03{", "bad hex": "\x03" + `{"request_body":"zz","request_truncated":false,"response_truncated":false}`,
		"bad flag": "\x03" + `{"request_truncated":"yes","response_truncated":false}`} {
		_, err := decodeEntries([]byte(data))
		assert.ErrorIs(t, err, errCorrupt, name)
	}
}

// Migration 00080 fills each sandbox's journal totals from the journal rows
// it already has: what its budget is then kept by.
func TestJournalTotals_MigrationCountsTheRowsThere(t *testing.T) {
	ctx := context.Background()
	fill := migrationStatement(t, "00080_journal_totals.sql", "UPDATE sandboxes SET")
	db := sandboxDB(t)
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
	_, err := db.ExecContext(ctx, `UPDATE sandboxes SET journal_entries = 99, journal_bytes = 99`)
	require.NoError(t, err)

	_, err = db.ExecContext(ctx, fill)
	require.NoError(t, err)
	for id, want := range map[string][2]int64{"sbx-full": {9, 60}, "sbx-empty": {0, 0}} {
		var got [2]int64
		require.NoError(t, db.QueryRowContext(ctx, `SELECT journal_entries, journal_bytes FROM sandboxes WHERE id = ?`, id).Scan(&got[0], &got[1]))
		assert.Equal(t, want, got, id)
	}
}

// On PostgreSQL a journal's transaction is quiet and commits
// asynchronously: it runs with synchronous_commit off and announces
// nothing (pgdb.QuietParam), and those settings end with it.
func TestJournalPipeline_CommitsAsynchronouslyAndQuietly(t *testing.T) {
	if testdb.Current() != testdb.Postgres {
		t.Skip("SQLite's journal commits as its every write does (APISTACK_TEST_BACKEND=postgres)")
	}
	ctx := context.Background()
	s := &store{db: sandboxDB(t)}
	// One connection, set as a durable cluster's are (the tests' own cluster
	// turns synchronous commits off for every session).
	s.db.SQL().SetMaxOpenConns(1)
	_, err := s.db.SQL().ExecContext(ctx, `SET synchronous_commit = on`)
	require.NoError(t, err)
	var sync, quiet string
	require.NoError(t, s.quietPipeline(ctx, []sqldb.Statement{{
		SQL:  `SELECT current_setting('synchronous_commit'), current_setting('` + pgdb.QuietParam + `')`,
		Scan: []any{&sync, &quiet},
	}}))
	assert.Equal(t, "off", sync)
	assert.Equal(t, "on", quiet)
	require.NoError(t, s.db.SQL().QueryRowContext(ctx, `SELECT current_setting('synchronous_commit'), current_setting('`+pgdb.QuietParam+`', true)`).Scan(&sync, &quiet))
	assert.Equal(t, "on", sync, "the next transaction commits as every other")
	assert.Empty(t, quiet, "and announces its commit")
}
