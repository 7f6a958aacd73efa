package sandbox

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/migrationset"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// migrationFiles are the schema migrations of both dialects
// (servers/internal/migrationset).
//
//go:embed migrations
var migrationFiles embed.FS

// Migrations returns the sandbox schema migrations for SQLite (goose SQL
// files).
func Migrations() fs.FS { return migrationset.Must(migrationFiles, "migrations", migrationset.SQLite) }

// PostgresMigrations returns the sandbox schema migrations for PostgreSQL,
// applied in the sandbox schema.
func PostgresMigrations() fs.FS {
	return migrationset.Must(migrationFiles, "migrations", migrationset.Postgres)
}

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
	Named       string // sealed; "" for none
	CreatedAt   time.Time
	LastUsedAt  time.Time
	// ClockBase is the time the sandbox's clock starts at (insert): the
	// stack's time, or a snapshot's for a fork.
	ClockBase time.Time
}

// store is every SQL statement of the sandbox service.
type store struct {
	db *sqldb.DB
	// budget bounds each sandbox's journal.
	budget JournalBudget
}

// JournalBudget bounds each sandbox's journal: past either bound the oldest
// entries are dropped (whole commits of the journal writer, oldest first)
// and counted in the sandbox's journal_dropped.
type JournalBudget struct {
	// Entries is the most entries kept.
	Entries int
	// Bytes is the most bytes the kept entries take in the database
	// (compressed, as stored).
	Bytes int64
}

// trimSQL finds, on PostgreSQL, the rows past the budget of the sandboxes
// it lists (its placeholder %s) among their oldest trimBatch rows: a row
// goes when it and the rows newer than it hold more entries, or more
// bytes, than the budget. A sandbox's totals (journal_entries,
// journal_bytes) say what all its rows hold, so only its oldest rows are
// read, and only those of the sandboxes past the budget. Parameters: the
// sandboxes, the budget (entries, bytes) twice. (On SQLite, trimJournal
// does the same in steps.)
const trimSQL = `SELECT j.id, j.sandbox_id, j.entries, j.bytes FROM (
    SELECT b.id, s.id AS sandbox_id, b.entries, b.bytes,
        s.journal_entries - SUM(b.entries) OVER w + b.entries AS kept_entries,
        s.journal_bytes - SUM(b.bytes) OVER w + b.bytes AS kept_bytes
    FROM sandboxes s CROSS JOIN LATERAL (
        SELECT id, entries, LENGTH(data) AS bytes FROM journal_batches WHERE sandbox_id = s.id ORDER BY id LIMIT ` + trimBatchText + `) AS b
    WHERE s.id IN (%s) AND (s.journal_entries > ? OR s.journal_bytes > ?)
    WINDOW w AS (PARTITION BY s.id ORDER BY b.id)) AS j
WHERE j.kept_entries > ? OR j.kept_bytes > ?`

// trimBatch is how many of a sandbox's oldest rows one trimSQL reads: a
// commit drops a row or two of a full journal; a journal more rows past
// its budget than that (the budget was just lowered) takes a trimSQL per
// trimBatch rows.
const (
	trimBatch     = 64
	trimBatchText = "64"
)

// trimAndCountSQL is trimSQL as one PostgreSQL statement that also deletes
// the rows it finds and counts them in their sandboxes' totals and
// journal_dropped (SQLite has no DELETE in a WITH). Same parameters.
const trimAndCountSQL = `WITH past AS (` + trimSQL + `),
gone AS (DELETE FROM journal_batches WHERE id IN (SELECT id FROM past) RETURNING sandbox_id, entries, LENGTH(data) AS bytes)
UPDATE sandboxes SET journal_dropped = journal_dropped + dropped.n,
    journal_entries = journal_entries - dropped.n, journal_bytes = journal_bytes - dropped.b
FROM (SELECT sandbox_id, SUM(entries) AS n, SUM(bytes) AS b FROM gone GROUP BY sandbox_id) AS dropped
WHERE sandboxes.id = dropped.sandbox_id`

// overBudgetSQL counts the sandboxes it lists whose journal is past the
// budget and has rows left to drop (so that trimming again, which drops at
// least the oldest row of each, ends). Parameters: the sandboxes, the
// budget (entries, bytes).
const overBudgetSQL = `SELECT COUNT(*) FROM sandboxes s WHERE s.id IN (%s) AND (s.journal_entries > ? OR s.journal_bytes > ?)
    AND EXISTS (SELECT 1 FROM journal_batches b WHERE b.sandbox_id = s.id)`

const recordColumns = `id, token_hash, clock, ttl_micros, state, credentials, named, created_at, last_used_at`

func scanRecord(row interface{ Scan(...any) error }) (record, error) {
	var r record
	var ttl, created, used int64
	err := row.Scan(&r.ID, &r.TokenHash, &r.Clock, &ttl, &r.State, &r.Credentials, &r.Named, &created, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return record{}, errNoSandbox
	}
	if err != nil {
		return record{}, fmt.Errorf("read sandbox: %w", err)
	}
	r.TTL, r.CreatedAt, r.LastUsedAt = time.Duration(ttl)*time.Microsecond, sqldb.Time(created), sqldb.Time(used)
	return r, nil
}

// insertCapped inserts r unless the deployment holds max sandboxes already
// (whatever their state): counted under a lock every replica takes, so the
// cap is exact across replicas sharing a PostgreSQL database (SQLite's
// transactions run one at a time already). The sandbox's clock starts at
// r.ClockBase, the stack's time unless given (a fork starts at its
// snapshot's; clock.go).
func (s *store) insertCapped(ctx context.Context, r record, most int) error {
	base := r.ClockBase
	if base.IsZero() {
		base = r.CreatedAt
	}
	return s.db.InTx(ctx, func(tx *sqldb.Tx) error {
		if err := tx.Lock(ctx, "sandbox_creates"); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sandboxes`).Scan(&n); err != nil {
			return fmt.Errorf("count sandboxes: %w", err)
		}
		if n >= most {
			return errTooManyRequests(retryAfterFull, "the deployment holds its most sandboxes (%d, --max-sandboxes); delete one, or wait for one to expire", most)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sandboxes (`+recordColumns+`, clock_base, clock_ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.TokenHash, r.Clock, r.TTL.Microseconds(), r.State, r.Credentials, r.Named, sqldb.Micros(r.CreatedAt), sqldb.Micros(r.LastUsedAt),
			sqldb.Micros(base), sqldb.Micros(r.CreatedAt))
		if err != nil {
			return fmt.Errorf("insert sandbox: %w", err)
		}
		return nil
	})
}

// ready stores the sandbox's credentials (and its fixture's, named) and
// makes it ready.
func (s *store) ready(ctx context.Context, id, credentials, named string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET credentials = ?, named = ?, state = ? WHERE id = ? AND state = ?`,
		credentials, named, stateReady, id, stateCreating)
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

// changedRow runs an update of one row by its key and reports whether it
// changed the row (its conditions held); what names it in errors.
func (s *store) changedRow(ctx context.Context, what, query string, args ...any) (bool, error) {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n == 1, nil
}

// remove deletes the sandbox row and its journal.
func (s *store) remove(ctx context.Context, id string) error {
	return s.dropJournal(ctx, id, func(tx *sqldb.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sandboxes WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete sandbox: %w", err)
		}
		return nil
	})
}

// clearJournal deletes the sandbox's journal, puts its clock back as it
// was created (the stack's time now, no offset, nothing due), forgets its
// fixture's credentials (a reset deletes what the fixture made) and records
// a use.
func (s *store) clearJournal(ctx context.Context, id string, now time.Time) error {
	return s.dropJournal(ctx, id, func(tx *sqldb.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE sandboxes SET last_used_at = ?, clock_base = ?, clock_ref = ?, clock_due = NULL, clock_lease = 0, named = '',
		journal_dropped = 0, journal_entries = 0, journal_bytes = 0 WHERE id = ?`, sqldb.Micros(now), sqldb.Micros(now), sqldb.Micros(now), id); err != nil {
			return fmt.Errorf("touch sandbox: %w", err)
		}
		return nil
	})
}

// dropJournal deletes the sandbox's journal and runs then, in one
// transaction (sqldb.InTx).
func (s *store) dropJournal(ctx context.Context, id string, then func(tx *sqldb.Tx) error) error {
	return s.db.InTx(ctx, func(tx *sqldb.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM journal_batches WHERE sandbox_id = ?`, id); err != nil {
			return fmt.Errorf("delete journal: %w", err)
		}
		return then(tx)
	})
}

// due lists the sandboxes the sweep must delete at now: ready ones unused
// for their TTL, ones whose delete did not finish, and ones left
// 'creating' for longer than stale (a replica died creating them).
func (s *store) due(ctx context.Context, now time.Time, stale time.Duration) ([]string, error) {
	ids, err := apistore.Collect(ctx, s.db, func(rows *sql.Rows, id *string) error { return rows.Scan(id) }, `SELECT id FROM sandboxes
		WHERE (state = ? AND last_used_at + ttl_micros <= ?) OR state = ? OR (state = ? AND created_at <= ?)
		ORDER BY last_used_at`, stateReady, sqldb.Micros(now), stateDeleting, stateCreating, sqldb.Micros(now.Add(-stale)))
	if err != nil {
		return nil, fmt.Errorf("list expired sandboxes: %w", err)
	}
	return ids, nil
}

// journalGroup is the entries of one sandbox in one commit of the writer;
// touch: the commit records the sandbox's use (journal.touches).
type journalGroup struct {
	sandbox string
	entries []apiserver.JournalEntry
	touch   bool
}

// groupBySandbox splits entries by sandbox, keeping their order.
func groupBySandbox(entries []apiserver.JournalEntry) []journalGroup {
	if len(entries) > 0 && !slices.ContainsFunc(entries, func(e apiserver.JournalEntry) bool { return e.Set != entries[0].Set }) {
		return []journalGroup{{sandbox: entries[0].Set, entries: entries}} // one sandbox: no copy
	}
	var groups []journalGroup
	at := map[string]int{}
	for _, e := range entries {
		i, ok := at[e.Set]
		if !ok {
			i = len(groups)
			at[e.Set] = i
			groups = append(groups, journalGroup{sandbox: e.Set})
		}
		groups[i].entries = append(groups[i].entries, e)
	}
	return groups
}

// appendJournal stores each group as one row, encoded by enc, in one
// transaction, adds the rows to their sandboxes' totals, drops the oldest
// rows of the sandboxes past the budget, and records the use of the
// sandboxes of the groups to touch; at is the time of use. The foreign key
// refuses a group whose sandbox is gone (and with it the transaction). The
// commit is quiet (sqldb.Tx.Quiet): no replica caches the journal, and the
// writer commits many times a second, so other replicas are not told of it.
//
// Its statements do not grow in number with the groups (one insert, one
// update of the totals, one touch, one search of the rows past the
// budget): with many sandboxes busy at once a commit holds a row for each,
// and a statement per row cost PostgreSQL a round trip each
// (BenchmarkJournalCostManySandboxes). On PostgreSQL they go in one round
// trip (sqldb.DB.QuietPipeline).
func (s *store) appendJournal(ctx context.Context, enc *entryEncoder, groups []journalGroup, at time.Time) error {
	enc.reset()
	insert := sqldb.Statement{SQL: `INSERT INTO journal_batches (sandbox_id, entries, last_at, data) VALUES ` +
		repeatJoined("(?, ?, ?, ?)", len(groups)), Args: make([]any, 0, 4*len(groups))}
	var entriesCase, bytesCase strings.Builder
	var entriesArgs, bytesArgs []any
	ids := make([]any, 0, len(groups))
	var touched []any
	for _, g := range groups {
		last := g.entries[0].Time
		for _, e := range g.entries[1:] {
			if e.Time.After(last) {
				last = e.Time
			}
		}
		row := enc.encode(g.entries)
		insert.Args = append(insert.Args, g.sandbox, len(g.entries), sqldb.Micros(last), row)
		ids = append(ids, g.sandbox)
		entriesCase.WriteString(" WHEN ? THEN ?")
		bytesCase.WriteString(" WHEN ? THEN ?")
		entriesArgs = append(entriesArgs, g.sandbox, int64(len(g.entries)))
		bytesArgs = append(bytesArgs, g.sandbox, int64(len(row)))
		if g.touch {
			touched = append(touched, g.sandbox)
		}
	}
	in := repeatJoined("?", len(ids))
	stmts := []sqldb.Statement{insert, {
		SQL: `UPDATE sandboxes SET journal_entries = journal_entries + CASE id` + entriesCase.String() + ` ELSE 0 END,
			journal_bytes = journal_bytes + CASE id` + bytesCase.String() + ` ELSE 0 END WHERE id IN (` + in + `)`,
		Args: slices.Concat(entriesArgs, bytesArgs, ids)}}
	if len(touched) > 0 {
		stmts = append(stmts, sqldb.Statement{
			SQL:  `UPDATE sandboxes SET last_used_at = ? WHERE last_used_at < ? AND id IN (` + repeatJoined("?", len(touched)) + `)`,
			Args: append([]any{sqldb.Micros(at), sqldb.Micros(at)}, touched...)})
	}
	entries, bytes, trim := s.budgetBounds()
	if s.db.Dialect() == sqldb.Postgres {
		if !trim {
			return s.quietPipeline(ctx, stmts)
		}
		trimAll := sqldb.Statement{SQL: fmt.Sprintf(trimAndCountSQL, in), Args: slices.Concat(ids, []any{entries, bytes, entries, bytes})}
		var over int64
		count := sqldb.Statement{SQL: fmt.Sprintf(overBudgetSQL, in), Args: slices.Concat(ids, []any{entries, bytes}), Scan: []any{&over}}
		if err := s.quietPipeline(ctx, append(stmts, trimAll, count)); err != nil {
			return err
		}
		// A journal more than trimBatch rows past the budget: on with the
		// rest, trimBatch rows a round trip.
		for over > 0 {
			if err := s.quietPipeline(ctx, []sqldb.Statement{trimAll, count}); err != nil {
				return err
			}
		}
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := tx.Quiet(ctx); err != nil {
		return err
	}
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("append journal entries: %w", err)
		}
	}
	if trim {
		for {
			n, err := s.trimJournal(ctx, tx, ids, in, entries, bytes)
			if err != nil {
				return err
			}
			if n < trimBatch {
				break
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// quietPipeline runs stmts on PostgreSQL in one round trip, as one quiet
// transaction (as Tx.Quiet makes one) that commits asynchronously: its
// commit is seen at once by every session but waits for no flush of the
// write-ahead log, so a crash of PostgreSQL itself (not of a replica) may
// lose the journal's last fraction of a second, its entries and the counts
// beside them together, as a crash of a replica loses the entries it had
// not written yet (docs/sandboxes.md).
func (s *store) quietPipeline(ctx context.Context, stmts []sqldb.Statement) error {
	quiet := sqldb.Statement{SQL: `SELECT set_config('` + pgdb.QuietParam + `', 'on', true), set_config('synchronous_commit', 'off', true)`}
	if err := s.db.QuietPipeline(ctx, append([]sqldb.Statement{quiet}, stmts...)...); err != nil {
		return fmt.Errorf("append journal entries: %w", err)
	}
	return nil
}

// budgetBounds is the budget as trimSQL's bounds (no bound: the largest
// number); trim is false when there is no budget at all.
func (s *store) budgetBounds() (entries, bytes int64, trim bool) {
	if s.budget.Entries <= 0 && s.budget.Bytes <= 0 {
		return 0, 0, false
	}
	entries, bytes = int64(s.budget.Entries), s.budget.Bytes
	if entries <= 0 {
		entries = math.MaxInt64
	}
	if bytes <= 0 {
		bytes = math.MaxInt64
	}
	return entries, bytes, true
}

// repeatJoined is n times s, joined by commas.
func repeatJoined(s string, n int) string {
	return strings.Repeat(s+", ", n-1) + s
}

// trimJournal drops, on SQLite, the rows past the budget among the oldest
// trimBatch of each of the sandboxes ids (in: their placeholders) past it
// (as trimSQL finds them), counts them in their sandboxes' totals and
// journal_dropped, and returns how many rows it dropped of the sandbox it
// dropped the most of.
func (s *store) trimJournal(ctx context.Context, tx *sqldb.Tx, ids []any, in string, entries, bytes int64) (int, error) {
	type total struct {
		id             string
		entries, bytes int64
	}
	over, err := apistore.Collect(ctx, tx, func(rows *sql.Rows, t *total) error { return rows.Scan(&t.id, &t.entries, &t.bytes) },
		`SELECT id, journal_entries, journal_bytes FROM sandboxes WHERE id IN (`+in+`) AND (journal_entries > ? OR journal_bytes > ?)`,
		slices.Concat(ids, []any{entries, bytes})...)
	if err != nil {
		return 0, fmt.Errorf("find journals past the budget: %w", err)
	}
	most := 0
	for _, t := range over {
		type row struct{ id, entries, bytes int64 }
		oldest, err := apistore.Collect(ctx, tx, func(rows *sql.Rows, r *row) error { return rows.Scan(&r.id, &r.entries, &r.bytes) },
			`SELECT id, entries, LENGTH(data) FROM journal_batches WHERE sandbox_id = ? ORDER BY id LIMIT `+trimBatchText, t.id)
		if err != nil {
			return 0, fmt.Errorf("find journal entries past the budget: %w", err)
		}
		var past []any
		var n, size int64
		// A row goes while it and the rows newer than it are past the budget.
		for _, r := range oldest {
			if t.entries-n <= entries && t.bytes-size <= bytes {
				break
			}
			past, n, size = append(past, r.id), n+r.entries, size+r.bytes
		}
		if len(past) == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM journal_batches WHERE id IN (`+repeatJoined("?", len(past))+`)`, past...); err != nil {
			return 0, fmt.Errorf("drop journal entries past the budget: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sandboxes SET journal_dropped = journal_dropped + ?,
			journal_entries = journal_entries - ?, journal_bytes = journal_bytes - ? WHERE id = ?`, n, n, size, t.id); err != nil {
			return 0, fmt.Errorf("count dropped journal entries: %w", err)
		}
		most = max(most, len(past))
	}
	return most, nil
}

// journalDropped is how many of sandbox id's journal entries were dropped
// to keep its journal within the budget.
func (s *store) journalDropped(ctx context.Context, id string) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT journal_dropped FROM sandboxes WHERE id = ?`, id).Scan(&n); err != nil {
		return 0, fmt.Errorf("read dropped journal entries: %w", err)
	}
	return n, nil
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

// journal reads the sandbox's entries that f selects, oldest first, and
// whether more than f.Limit match. Rows are read in order and decoded;
// the filters other than since and after apply to the decoded entries.
func (s *store) journal(ctx context.Context, id string, f journalFilter) ([]storedEntry, bool, error) {
	where := []string{`sandbox_id = ?`, `id >= ?`}
	args := []any{id, f.After >> seqShift}
	if f.Since != nil {
		where, args = append(where, `last_at >= ?`), append(args, sqldb.Micros(*f.Since))
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, data FROM journal_batches WHERE `+strings.Join(where, ` AND `)+` ORDER BY id`, args...)
	if err != nil {
		return nil, false, fmt.Errorf("read journal: %w", err)
	}
	defer rows.Close()
	var out []storedEntry
	for rows.Next() && len(out) <= f.Limit {
		var row int64
		var data []byte
		if err := rows.Scan(&row, &data); err != nil {
			return nil, false, fmt.Errorf("read journal: %w", err)
		}
		entries, err := decodeEntries(data)
		if err != nil {
			return nil, false, fmt.Errorf("read journal row %d: %w", row, err)
		}
		for i, e := range entries {
			seq := row<<seqShift | int64(i)
			if seq <= f.After || !f.matches(e) {
				continue
			}
			e.Set = id
			out = append(out, storedEntry{Seq: seq, JournalEntry: e})
			if len(out) > f.Limit {
				break
			}
		}
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

// matches reports whether e passes f's filters (all but after).
func (f journalFilter) matches(e apiserver.JournalEntry) bool {
	return (f.API == "" || e.API == f.API) && (f.Operation == "" || e.Operation == f.Operation) &&
		(f.Status == 0 || e.Status == f.Status) && (f.Since == nil || !e.Time.Before(*f.Since))
}
