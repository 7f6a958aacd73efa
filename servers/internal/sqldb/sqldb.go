// Package sqldb is the database handle the services' stores speak SQL
// through: every statement is prepared once, the first time its text is
// used, and reused by every later call, on the pool and inside
// transactions.
//
// Parsing SQL text was the largest single cost of a read under load (about a
// quarter of a PAM list's CPU): database/sql prepares a statement on every
// QueryContext call of a *sql.DB, and the SQLite driver parses the text each
// time. A *sql.Stmt prepared on the pool is prepared on each connection once
// and kept there, so keeping one per distinct text removes that cost.
package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/stdlib"
)

// Dialect is the SQL engine behind a DB.
type Dialect int

// The engines the services run on.
const (
	// SQLite is the embedded default: one process owns the database.
	SQLite Dialect = iota
	// Postgres is the scale-out engine: any number of replicas share it.
	Postgres
)

// String returns "sqlite" or "postgres".
func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// maxCached bounds the number of distinct statements kept prepared. The
// services build their SQL from a fixed set of fragments, so their distinct
// texts number in the tens; a text beyond the bound runs unprepared.
const maxCached = 1024

// DB is a *sql.DB whose statements are prepared once per distinct text. It
// is safe for concurrent use.
type DB struct {
	db      *sql.DB
	dialect Dialect
	// writer, when not nil, is held by every write (ExecContext outside a
	// transaction, and a whole transaction): see Options.SerializeWrites.
	writer *sync.Mutex

	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
	// rebound memoizes Rebind on PostgreSQL: query text -> $n text.
	rebound      sync.Map
	reboundCount atomic.Int64

	// onCommit are called after every committed write (OnCommit).
	onCommit []func()
}

// OnCommit registers f to be called after every write that committed: an
// ExecContext outside a transaction, or a transaction's Commit. Caches of
// what the database holds drop their entries in f. Register before the DB
// is used. Writes made through SQL() bypass it.
func (d *DB) OnCommit(f func()) {
	d.onCommit = append(d.onCommit, f)
}

func (d *DB) committed() {
	for _, f := range d.onCommit {
		f()
	}
}

// Options tunes a DB.
type Options struct {
	// SerializeWrites queues this process's writers in Go instead of in the
	// database. SQLite allows one writer at a time; a second writer waits in
	// its busy handler, which sleeps in steps of up to 100 ms, so under
	// concurrent writes most of a write's latency is sleeping. Queued on a
	// mutex, each writer starts the moment the previous one commits. Every
	// transaction counts as a writer (the services' SQLite transactions take
	// the write lock at BEGIN). On PostgreSQL, where the transactions of
	// every replica queue on a lock in the database (see BeginTx), it keeps
	// this replica's queue in Go, so waiting writers do not each hold one of
	// the pool's few connections.
	SerializeWrites bool
}

// New wraps db, an SQLite database (modernc.org/sqlite) or a PostgreSQL one
// (pgx's database/sql driver); the dialect is told by the driver. The
// services write their SQL once, with ? placeholders, and New's DB rewrites
// them to $1, $2, ... for PostgreSQL. Close closes the prepared statements
// and db.
func New(db *sql.DB, opts Options) *DB {
	d := &DB{db: db, stmts: map[string]*sql.Stmt{}}
	if _, ok := db.Driver().(*stdlib.Driver); ok {
		d.dialect = Postgres
	}
	if opts.SerializeWrites {
		d.writer = &sync.Mutex{}
	}
	return d
}

// Dialect returns the engine behind the DB.
func (d *DB) Dialect() Dialect { return d.dialect }

// Shared reports whether other processes may write the database too (the
// replicas of a scale-out on PostgreSQL). A cache of what the database holds
// must not then answer for it: another replica's commit does not reach this
// process's OnCommit hooks.
func (d *DB) Shared() bool { return d.dialect == Postgres }

// Rebind rewrites the ? placeholders of query for the DB's dialect: $1, $2,
// ... on PostgreSQL (a ? inside a quoted string or identifier, or in a
// comment, is left alone); query unchanged on SQLite.
func (d *DB) Rebind(query string) string {
	if d.dialect != Postgres {
		return query
	}
	if q, ok := d.rebound.Load(query); ok {
		return q.(string)
	}
	q := rebind(query)
	if d.reboundCount.Add(1) <= maxCached {
		d.rebound.Store(query, q)
	}
	return q
}

func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch c {
		case '\'', '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			i += end + 1
		case '-':
			if i+1 < len(query) && query[i+1] == '-' {
				end := strings.IndexByte(query[i:], '\n')
				if end < 0 {
					b.WriteString(query[i:])
					return b.String()
				}
				b.WriteString(query[i : i+end+1])
				i += end
				continue
			}
			b.WriteByte(c)
		case '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// SQL returns the underlying *sql.DB, for migrations and tests.
func (d *DB) SQL() *sql.DB { return d.db }

// Close closes every prepared statement and the database.
func (d *DB) Close() error {
	d.mu.Lock()
	for q, st := range d.stmts {
		_ = st.Close()
		delete(d.stmts, q)
	}
	d.mu.Unlock()
	return d.db.Close()
}

// stmt returns the statement prepared for query, preparing it on first use.
// A nil statement (with a nil error) means the cache is full: run the text
// directly.
func (d *DB) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if d.dialect == Postgres {
		// pgx prepares and caches each statement on each connection itself.
		// Preparing on the pool here would also need a second connection
		// from inside a transaction, which a full pool may never give.
		return nil, nil
	}
	d.mu.RLock()
	st, ok := d.stmts[query]
	d.mu.RUnlock()
	if ok {
		return st, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if st, ok := d.stmts[query]; ok {
		return st, nil
	}
	if len(d.stmts) >= maxCached {
		return nil, nil
	}
	// Prepared with a context that outlives the caller's: the statement is
	// kept for every later caller.
	st, err := d.db.PrepareContext(context.WithoutCancel(ctx), d.Rebind(query))
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	d.stmts[query] = st
	return st, nil
}

// QueryContext runs a query that returns rows.
func (d *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := d.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return d.db.QueryContext(ctx, d.Rebind(query), args...)
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs a query that returns at most one row; errors are
// deferred to the row's Scan.
func (d *DB) QueryRowContext(ctx context.Context, query string, args ...any) *Row {
	st, err := d.stmt(ctx, query)
	if err != nil {
		return &Row{err: err}
	}
	if st == nil {
		return &Row{row: d.db.QueryRowContext(ctx, d.Rebind(query), args...)}
	}
	return &Row{row: st.QueryRowContext(ctx, args...)}
}

// ExecContext runs a statement that returns no rows.
func (d *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := d.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if d.writer != nil {
		d.writer.Lock()
		defer d.writer.Unlock()
	}
	var res sql.Result
	if st == nil {
		res, err = d.db.ExecContext(ctx, d.Rebind(query), args...)
	} else {
		res, err = st.ExecContext(ctx, args...)
	}
	if err == nil {
		d.committed()
	}
	return res, err
}

// BeginTx starts a transaction whose statements reuse the prepared ones.
// With SerializeWrites it waits for the writers before it (or ctx) first.
//
// On PostgreSQL a transaction first takes a transaction-scoped advisory lock
// named after the API's schema, so the transactions of one API run one at a
// time across every replica, as they do on SQLite: the stores' transactions
// read, decide and write (a quota, a unique name, the simulator's next step,
// an outbox claim), and under this lock what they read cannot change before
// they commit, without a retry loop for serialization failures at each call.
// Single statements outside a transaction (reads, and writes that are atomic
// on their own, like a rate-limit update) do not take it.
func (d *DB) BeginTx(ctx context.Context, opts *sql.TxOptions) (*Tx, error) {
	if d.writer != nil {
		d.writer.Lock()
	}
	tx, err := d.db.BeginTx(ctx, opts)
	if err == nil && d.dialect == Postgres && (opts == nil || !opts.ReadOnly) {
		if _, err = tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema()))`); err != nil {
			_ = tx.Rollback()
			err = fmt.Errorf("take the write lock: %w", err)
		}
	}
	if err != nil {
		if d.writer != nil {
			d.writer.Unlock()
		}
		return nil, err
	}
	return &Tx{tx: tx, db: d}, nil
}

// Row is the result of QueryRowContext: a *sql.Row, or the error of
// preparing its statement.
type Row struct {
	row *sql.Row
	err error
}

// Scan copies the row's columns into dest; sql.ErrNoRows when there is none.
func (r *Row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.row.Scan(dest...)
}

// Err returns the error of the query, if any, without scanning.
func (r *Row) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.row.Err()
}

// Tx is a transaction of a DB. Its statements are the DB's prepared ones,
// bound to the transaction's connection (where they are already prepared
// once the connection has run them).
type Tx struct {
	tx   *sql.Tx
	db   *DB
	done sync.Once
}

// Commit commits the transaction.
func (t *Tx) Commit() error {
	defer t.release()
	if err := t.tx.Commit(); err != nil {
		return err
	}
	t.db.committed()
	return nil
}

// Rollback aborts the transaction; after Commit it is a no-op returning
// sql.ErrTxDone.
func (t *Tx) Rollback() error {
	defer t.release()
	return t.tx.Rollback()
}

// release lets the next writer in, once.
func (t *Tx) release() {
	if t.db.writer != nil {
		t.done.Do(t.db.writer.Unlock)
	}
}

// bind returns the DB's statement for query bound to the transaction, or nil
// when it runs unprepared.
func (t *Tx) bind(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := t.db.stmt(ctx, query)
	if err != nil || st == nil {
		return nil, err
	}
	return t.tx.StmtContext(ctx, st), nil
}

// QueryContext runs a query that returns rows within the transaction.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.bind(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return t.tx.QueryContext(ctx, t.db.Rebind(query), args...)
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs a query that returns at most one row within the
// transaction.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *Row {
	st, err := t.bind(ctx, query)
	if err != nil {
		return &Row{err: err}
	}
	if st == nil {
		return &Row{row: t.tx.QueryRowContext(ctx, t.db.Rebind(query), args...)}
	}
	return &Row{row: st.QueryRowContext(ctx, args...)}
}

// ExecContext runs a statement that returns no rows within the transaction.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.bind(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return t.tx.ExecContext(ctx, t.db.Rebind(query), args...)
	}
	return st.ExecContext(ctx, args...)
}

// PrepareContext prepares a statement for repeated use within the
// transaction (a batch of inserts); it is the DB's prepared statement bound
// to the transaction, closed when the transaction ends.
func (t *Tx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := t.bind(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return t.tx.PrepareContext(ctx, t.db.Rebind(query))
	}
	return st, nil
}
