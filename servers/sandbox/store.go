package sandbox

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

//go:embed migrations/postgres/*.sql
var postgresMigrationFiles embed.FS

// Migrations returns the sandbox schema migrations for SQLite (goose SQL
// files).
func Migrations() fs.FS { return sqlitedb.Dir(migrationFiles, "migrations") }

// PostgresMigrations returns the sandbox schema migrations for PostgreSQL,
// applied in the sandbox schema.
func PostgresMigrations() fs.FS { return sqlitedb.Dir(postgresMigrationFiles, "migrations/postgres") }

// The states of a sandbox row.
const (
	stateCreating = "creating"
	stateReady    = "ready"
	stateDeleting = "deleting"
)

// errNotFound: no such sandbox.
var errNoSandbox = errors.New("no such sandbox")

// record is a sandbox as stored.
type record struct {
	ID          string
	TokenHash   []byte
	Clock       string
	TTL         time.Duration
	State       string
	Credentials string // sealed
	CreatedAt   time.Time
	LastUsedAt  time.Time
}

// store is every SQL statement of the sandbox service.
type store struct {
	db *sqldb.DB
}

const recordColumns = `id, token_hash, clock, ttl_micros, state, credentials, created_at, last_used_at`

func scanRecord(row interface{ Scan(...any) error }) (record, error) {
	var r record
	var ttl, created, used int64
	err := row.Scan(&r.ID, &r.TokenHash, &r.Clock, &ttl, &r.State, &r.Credentials, &created, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return record{}, errNoSandbox
	}
	if err != nil {
		return record{}, fmt.Errorf("read sandbox: %w", err)
	}
	r.TTL, r.CreatedAt, r.LastUsedAt = time.Duration(ttl)*time.Microsecond, sqldb.Time(created), sqldb.Time(used)
	return r, nil
}

func (s *store) insert(ctx context.Context, r record) error {
	// The sandbox's clock starts at the stack's time (clock.go).
	_, err := s.db.ExecContext(ctx, `INSERT INTO sandboxes (`+recordColumns+`, clock_base, clock_ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.TokenHash, r.Clock, r.TTL.Microseconds(), r.State, r.Credentials, sqldb.Micros(r.CreatedAt), sqldb.Micros(r.LastUsedAt),
		sqldb.Micros(r.CreatedAt), sqldb.Micros(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert sandbox: %w", err)
	}
	return nil
}

// ready stores the sandbox's credentials and makes it ready.
func (s *store) ready(ctx context.Context, id, credentials string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET credentials = ?, state = ? WHERE id = ? AND state = ?`,
		credentials, stateReady, id, stateCreating)
	if err != nil {
		return fmt.Errorf("store sandbox credentials: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNoSandbox
	}
	return nil
}

func (s *store) get(ctx context.Context, id string) (record, error) {
	return scanRecord(s.db.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM sandboxes WHERE id = ?`, id))
}

func (s *store) byToken(ctx context.Context, hash []byte) (record, error) {
	return scanRecord(s.db.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM sandboxes WHERE token_hash = ?`, hash))
}

// touch records a use of the ready sandbox id at now.
func (s *store) touch(ctx context.Context, id string, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET last_used_at = ? WHERE id = ? AND last_used_at < ?`,
		sqldb.Micros(now), id, sqldb.Micros(now))
	if err != nil {
		return fmt.Errorf("touch sandbox: %w", err)
	}
	return nil
}

// markDeleting makes the sandbox's token stop working; the caller then
// deletes its tenants and finally the row (remove).
func (s *store) markDeleting(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET state = ? WHERE id = ?`, stateDeleting, id)
	if err != nil {
		return fmt.Errorf("mark sandbox deleted: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNoSandbox
	}
	return nil
}

// remove deletes the sandbox row and its journal.
func (s *store) remove(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `DELETE FROM journal WHERE sandbox_id = ?`, id); err != nil {
		return fmt.Errorf("delete journal: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sandboxes WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete sandbox: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// clearJournal deletes the sandbox's journal and records a use.
func (s *store) clearJournal(ctx context.Context, id string, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `DELETE FROM journal WHERE sandbox_id = ?`, id); err != nil {
		return fmt.Errorf("delete journal: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sandboxes SET last_used_at = ? WHERE id = ?`, sqldb.Micros(now), id); err != nil {
		return fmt.Errorf("touch sandbox: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// due lists the sandboxes the sweep must delete at now: ready ones unused
// for their TTL, ones whose delete did not finish, and ones left
// 'creating' for longer than stale (a replica died creating them).
func (s *store) due(ctx context.Context, now time.Time, stale time.Duration) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM sandboxes
		WHERE (state = ? AND last_used_at + ttl_micros <= ?) OR state = ? OR (state = ? AND created_at <= ?)
		ORDER BY last_used_at`, stateReady, sqldb.Micros(now), stateDeleting, stateCreating, sqldb.Micros(now.Add(-stale)))
	if err != nil {
		return nil, fmt.Errorf("list expired sandboxes: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list expired sandboxes: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// journalInsert stores one entry; the foreign key refuses it when its
// sandbox is gone.
const journalInsert = `INSERT INTO journal (sandbox_id, api, operation, method, path, query, status, at, duration_micros,
	request_headers, response_headers, request_body, request_truncated, response_body, response_truncated)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func journalArgs(e apiserver.JournalEntry) ([]any, error) {
	reqH, err := json.Marshal(e.RequestHeaders)
	if err != nil {
		return nil, err
	}
	respH, err := json.Marshal(e.ResponseHeaders)
	if err != nil {
		return nil, err
	}
	return []any{e.Set, e.API, e.Operation, e.Method, e.Path, e.Query, e.Status, sqldb.Micros(e.Time), e.Duration.Microseconds(),
		string(reqH), string(respH), nonNil(e.RequestBody), e.RequestTruncated, nonNil(e.ResponseBody), e.ResponseTruncated}, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// appendEntry stores one entry on its own (after its batch failed: its
// sandbox may be gone).
func (s *store) appendEntry(ctx context.Context, e apiserver.JournalEntry) error {
	args, err := journalArgs(e)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, journalInsert, args...); err != nil {
		return fmt.Errorf("insert journal entry: %w", err)
	}
	return nil
}

// rowsPerInsert is how many entries one INSERT statement stores: one
// statement of many rows costs far less than as many statements.
const rowsPerInsert = 32

// journalRow is the placeholders of one entry in a multi-row INSERT.
const journalRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// appendJournal stores entries in one transaction and records the use of
// their sandboxes; at is the time of use.
func (s *store) appendJournal(ctx context.Context, entries []apiserver.JournalEntry, at time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	used := map[string]bool{}
	for start := 0; start < len(entries); start += rowsPerInsert {
		chunk := entries[start:min(start+rowsPerInsert, len(entries))]
		args := make([]any, 0, 15*len(chunk))
		for _, e := range chunk {
			a, err := journalArgs(e)
			if err != nil {
				return err
			}
			args = append(args, a...)
			used[e.Set] = true
		}
		q := strings.TrimSuffix(journalInsert, journalRow) + strings.Repeat(journalRow+`, `, len(chunk)-1) + journalRow
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("insert journal entries: %w", err)
		}
	}
	for id := range used {
		if _, err := tx.ExecContext(ctx, `UPDATE sandboxes SET last_used_at = ? WHERE id = ? AND last_used_at < ?`,
			sqldb.Micros(at), id, sqldb.Micros(at)); err != nil {
			return fmt.Errorf("touch sandbox: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// journalFilter selects entries of one sandbox.
type journalFilter struct {
	API, Operation string
	Status         int
	Since          *time.Time
	After          int64
	Limit          int
}

// storedEntry is a journal entry as read back.
type storedEntry struct {
	Seq int64
	apiserver.JournalEntry
}

func (s *store) journal(ctx context.Context, id string, f journalFilter) ([]storedEntry, bool, error) {
	where := []string{`sandbox_id = ?`, `seq > ?`}
	args := []any{id, f.After}
	if f.API != "" {
		where, args = append(where, `api = ?`), append(args, f.API)
	}
	if f.Operation != "" {
		where, args = append(where, `operation = ?`), append(args, f.Operation)
	}
	if f.Status != 0 {
		where, args = append(where, `status = ?`), append(args, f.Status)
	}
	if f.Since != nil {
		where, args = append(where, `at >= ?`), append(args, sqldb.Micros(*f.Since))
	}
	args = append(args, f.Limit+1)
	rows, err := s.db.QueryContext(ctx, `SELECT seq, api, operation, method, path, query, status, at, duration_micros,
		request_headers, response_headers, request_body, request_truncated, response_body, response_truncated
		FROM journal WHERE `+strings.Join(where, ` AND `)+` ORDER BY seq LIMIT ?`, args...)
	if err != nil {
		return nil, false, fmt.Errorf("read journal: %w", err)
	}
	defer rows.Close()
	var out []storedEntry
	for rows.Next() {
		var e storedEntry
		var at, dur int64
		var reqH, respH string
		if err := rows.Scan(&e.Seq, &e.API, &e.Operation, &e.Method, &e.Path, &e.Query, &e.Status, &at, &dur,
			&reqH, &respH, &e.RequestBody, &e.RequestTruncated, &e.ResponseBody, &e.ResponseTruncated); err != nil {
			return nil, false, fmt.Errorf("read journal: %w", err)
		}
		e.Time, e.Duration = sqldb.Time(at), time.Duration(dur)*time.Microsecond
		e.RequestHeaders, e.ResponseHeaders = http.Header{}, http.Header{}
		if err := json.Unmarshal([]byte(reqH), &e.RequestHeaders); err != nil {
			return nil, false, fmt.Errorf("read journal headers: %w", err)
		}
		if err := json.Unmarshal([]byte(respH), &e.ResponseHeaders); err != nil {
			return nil, false, fmt.Errorf("read journal headers: %w", err)
		}
		e.Set = id
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("read journal: %w", err)
	}
	more := len(out) > f.Limit
	if more {
		out = out[:f.Limit]
	}
	return out, more, nil
}
