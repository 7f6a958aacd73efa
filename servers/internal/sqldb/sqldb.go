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
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/apistack/apistack/servers/internal/pgdb"
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
	// transaction, and a whole transaction) on SQLite: see
	// Options.SerializeWrites.
	writer writerLock
	// group, with writer, commits concurrent writes together (see
	// batch.go).
	group *GroupCommit[*batchedWrite]
	// pending counts the writes in group, queued or committing.
	pending atomic.Int64

	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
	// rebound memoizes Rebind on PostgreSQL: query text -> $n text.
	rebound      sync.Map
	reboundCount atomic.Int64

	// onCommit are called after every committed write (OnCommit), and
	// onRemote after every commit heard from another pool (OnRemoteCommit):
	// copied on registration, since the watcher may call them already.
	onCommit, onRemote atomic.Pointer[[]func()]
	// followers are the caches that depend on some tables alone
	// (FollowTables): copied on registration, as the hooks are.
	followers atomic.Pointer[[]tableFollower]
	// watcher hears the commits of other replicas (PostgreSQL only).
	watcher *pgdb.Watcher
}

// OnCommit registers f to be called after every write that committed: an
// ExecContext outside a transaction, or a transaction's Commit, and, on
// PostgreSQL, every commit of another replica this one hears of (see
// OnRemoteCommit). Caches of what the database holds drop their entries in
// f. Register before the DB is used. Writes made through SQL() bypass it.
func (d *DB) OnCommit(f func()) {
	register(&d.onCommit, f)
}

var registerMu sync.Mutex

func register(hooks *atomic.Pointer[[]func()], f func()) {
	registerMu.Lock()
	defer registerMu.Unlock()
	var fs []func()
	if p := hooks.Load(); p != nil {
		fs = slices.Clone(*p)
	}
	fs = append(fs, f)
	hooks.Store(&fs)
}

func run(hooks *atomic.Pointer[[]func()]) {
	if p := hooks.Load(); p != nil {
		for _, f := range *p {
			f()
		}
	}
}

// OnRemoteCommit registers f to be called after every commit another
// replica makes to the API's schema, as soon as this replica hears of it
// (PostgreSQL's LISTEN/NOTIFY; see pgdb.Watch), and whenever this replica
// listens again after losing its listening session. Register before the DB
// is used.
func (d *DB) OnRemoteCommit(f func()) {
	register(&d.onRemote, f)
}

// heard is the watcher's report of a commit made elsewhere.
func (d *DB) heard(c pgdb.Change) {
	run(&d.onRemote)
	if p := d.followers.Load(); p != nil {
		for _, f := range *p {
			if f.dependsOn(c) {
				f.cache.Invalidate()
			}
		}
	}
	d.committed()
}

// Fresh reports whether a cache of what the database holds may answer now:
// always on SQLite, where this process makes every write; on PostgreSQL
// while this replica is listening for the other replicas' commits.
func (d *DB) Fresh() bool {
	if d.dialect != Postgres {
		return true
	}
	return d.watcher != nil && d.watcher.Listening()
}

// Follower is a cache that a DB keeps right (a *cache.Cache).
type Follower interface {
	Gate(fresh func() bool)
	Invalidate()
}

// Follow keeps c right against the commits of other replicas: c answers
// only while the DB is Fresh and is dropped on every commit heard from
// another replica. The DB's own commits are the caller's to act on (OnCommit,
// or a service's own invalidation after a revoking change). Call before c is
// used.
func (d *DB) Follow(c Follower) {
	c.Gate(d.Fresh)
	d.OnRemoteCommit(c.Invalidate)
}

// Dependency is a table a cache's entries are read from (FollowTables).
type Dependency struct {
	// Table is the table's name, in the API's schema.
	Table string
	// Inserts says whether a row inserted into Table can change what the
	// cache answers: true for a cache that holds the absence of a row or a
	// list of rows; false for one that holds rows found by key, or facts
	// about rows that exist already (a new row of a table joined to a
	// cached row cannot change it), which only updates and deletes change.
	Inserts bool
}

// tableFollower is a cache and the tables it depends on.
type tableFollower struct {
	cache Follower
	deps  []Dependency
}

func (f tableFollower) dependsOn(c pgdb.Change) bool {
	if c.Any() {
		return true
	}
	for _, d := range f.deps {
		if d.Table == c.Table && (d.Inserts || c.Op != "INSERT") {
			return true
		}
	}
	return false
}

// FollowTables is Follow for a cache whose entries are read from deps
// alone: another replica's commit drops it only when it changed one of
// them as the dependency says (an insert only when Inserts), or when this
// replica may have missed commits. A cache that depends on more than it
// names answers stale entries: name every table its queries read. Call
// before c is used.
func (d *DB) FollowTables(c Follower, deps ...Dependency) {
	c.Gate(d.Fresh)
	registerMu.Lock()
	defer registerMu.Unlock()
	var fs []tableFollower
	if p := d.followers.Load(); p != nil {
		fs = slices.Clone(*p)
	}
	fs = append(fs, tableFollower{cache: c, deps: slices.Clone(deps)})
	d.followers.Store(&fs)
}

// Sync returns once this replica has heard every commit other replicas made
// before the call (at once on SQLite): tests use it to wait for a write
// through one replica to reach another's caches.
func (d *DB) Sync(ctx context.Context) error {
	if d.watcher == nil {
		return nil
	}
	return d.watcher.Sync(ctx)
}

// Sync waits, like DB.Sync, for the replica of the services on db (a pool
// a service was given) to hear every commit made before the call.
func Sync(ctx context.Context, db *sql.DB) error {
	if w, ok := watchers.Load(db); ok {
		return w.(*pgdb.Watcher).Sync(ctx)
	}
	return nil
}

// HeardOn returns how many commits of other replicas (and re-listens) the
// replica of the services on db (a pool a service was given) has heard so
// far, each of which dropped their caches; 0 on SQLite.
func HeardOn(db *sql.DB) uint64 {
	if w, ok := watchers.Load(db); ok {
		return w.(*pgdb.Watcher).Heard()
	}
	return 0
}

// watchers holds the watcher of each PostgreSQL pool a DB was made on, so
// that DBs on one pool share one listening session.
var (
	watchers  sync.Map // *sql.DB -> *pgdb.Watcher
	watchMu   sync.Mutex
	watchedBy = map[*sql.DB][]*DB{}
)

func (d *DB) committed() {
	run(&d.onCommit)
}

// Options tunes a DB.
type Options struct {
	// SerializeWrites queues this process's writers in Go instead of in the
	// database. SQLite allows one writer at a time; a second writer waits in
	// its busy handler, which sleeps in steps of up to 100 ms, so under
	// concurrent writes most of a write's latency is sleeping. Queued on a
	// mutex, each writer starts the moment the previous one commits. Every
	// transaction counts as a writer (the services' SQLite transactions take
	// the write lock at BEGIN). It has no effect on PostgreSQL, where
	// writers run in parallel, each taking the locks its invariant needs
	// (see BeginTx). The writes made through ExecContext, InTx and
	// InTxOnce that queue together are committed together, in one
	// transaction (group commit; each keeps its own outcome): see batch.go.
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
	if opts.SerializeWrites && d.dialect == SQLite {
		d.writer = make(writerLock, 1)
		// No time bound on a batch: its transaction runs its writes one
		// after the other, each under its caller's context, however long
		// the batch; a bound would end the transaction under writes that
		// did nothing wrong (database/sql rolls a transaction back when
		// its context ends).
		d.group = &GroupCommit[*batchedWrite]{Commit: d.commitBatch, Gather: 16, Timeout: -1}
	}
	if d.dialect == Postgres {
		d.watch()
	}
	return d
}

// watch joins (or starts) the watcher of the DB's pool. A pool that cannot
// be watched (not opened by pgdb.Open) leaves the DB never Fresh: its
// caches then hold nothing.
func (d *DB) watch() {
	watchMu.Lock()
	defer watchMu.Unlock()
	if w, ok := watchers.Load(d.db); ok {
		d.watcher = w.(*pgdb.Watcher)
		watchedBy[d.db] = append(watchedBy[d.db], d)
		return
	}
	pool := d.db
	w := pgdb.Watch(pool, func(c pgdb.Change) {
		watchMu.Lock()
		dbs := slices.Clone(watchedBy[pool])
		watchMu.Unlock()
		for _, db := range dbs {
			db.heard(c)
		}
	})
	d.watcher = w
	watchers.Store(pool, w)
	watchedBy[pool] = []*DB{d}
	go func() {
		<-w.Done()
		watchMu.Lock()
		watchers.Delete(pool)
		delete(watchedBy, pool)
		watchMu.Unlock()
	}()
}

// Dialect returns the engine behind the DB.
func (d *DB) Dialect() Dialect { return d.dialect }

// Shared reports whether other processes may write the database too (the
// replicas of a scale-out on PostgreSQL). A cache of what the database holds
// then answers only while the replica hears their commits (Follow).
func (d *DB) Shared() bool { return d.dialect == Postgres }

// Heard returns how many commits of other replicas this DB has heard of
// (0 on SQLite).
func (d *DB) Heard() uint64 {
	if d.watcher == nil {
		return 0
	}
	return d.watcher.Heard()
}

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
	return queryOn(ctx, st, err, d.db, d.Rebind(query), args)
}

// QueryRowContext runs a query that returns at most one row; errors are
// deferred to the row's Scan.
func (d *DB) QueryRowContext(ctx context.Context, query string, args ...any) *Row {
	st, err := d.stmt(ctx, query)
	return queryRowOn(ctx, st, err, d.db, d.Rebind(query), args)
}

// runner is where a query runs unprepared: the *sql.DB or the *sql.Tx.
type runner interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// queryOn runs a query that returns rows: on st, its prepared statement,
// or, when st is nil, as the text query (rebound) on r; err is the
// preparing's.
func queryOn(ctx context.Context, st *sql.Stmt, err error, r runner, query string, args []any) (*sql.Rows, error) {
	if err != nil {
		return nil, err
	}
	if st == nil {
		return r.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// queryRowOn runs a query that returns at most one row as queryOn does;
// errors are deferred to the row's Scan.
func queryRowOn(ctx context.Context, st *sql.Stmt, err error, r runner, query string, args []any) *Row {
	if err != nil {
		return &Row{err: err}
	}
	if st == nil {
		return &Row{row: r.QueryRowContext(ctx, query, args...)}
	}
	return &Row{row: st.QueryRowContext(ctx, args...)}
}

// execOn runs a statement that returns no rows as queryOn does.
func execOn(ctx context.Context, st *sql.Stmt, err error, r runner, query string, args []any) (sql.Result, error) {
	if err != nil {
		return nil, err
	}
	if st == nil {
		return r.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// ExecContext runs a statement that returns no rows.
func (d *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.exec(ctx, false, query, args)
}

// QuietExecContext is ExecContext without the OnCommit hooks, for a write
// that no cache of this process can be stale after (an insert of a row no
// cache holds the absence of, as a new token): the caches the hooks drop
// (list pages) are kept. The commit notifications other replicas hear are
// the table's own (pgdb.QuietInsertsComment).
func (d *DB) QuietExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.exec(ctx, true, query, args)
}

func (d *DB) exec(ctx context.Context, quiet bool, query string, args []any) (sql.Result, error) {
	if d.batched() {
		return d.execBatched(ctx, quiet, query, args)
	}
	return d.execAlone(ctx, quiet, query, args)
}

// execAlone runs a statement that returns no rows in a transaction of its
// own (autocommit); a quiet one runs no OnCommit hooks.
func (d *DB) execAlone(ctx context.Context, quiet bool, query string, args []any) (sql.Result, error) {
	st, err := d.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if d.writer != nil {
		if err := d.writer.lock(ctx); err != nil {
			return nil, err
		}
		defer d.writer.unlock()
	}
	res, err := execOn(ctx, st, nil, d.db, d.Rebind(query), args)
	if err == nil && !quiet {
		d.committed()
	}
	return res, err
}

// BeginTx starts a transaction whose statements reuse the prepared ones.
// With SerializeWrites on SQLite it waits for the writers before it (or ctx)
// first: there, transactions run one at a time.
//
// On PostgreSQL transactions run in parallel (READ COMMITTED), on every
// replica: a transaction that reads, decides and writes takes the locks its
// decision needs, and no more: the row of the tenant whose quota or names
// it checks (SELECT ... FOR UPDATE), a named lock (Tx.Lock) for a
// decision over many tenants' rows, or the locks of the tenants or items it
// claims work for, skipping those another replica is claiming for
// (Tx.TryLock: the fax simulator's and outbox's claims). Constraints guard
// the rest (unique names, keys). InTx retries what PostgreSQL may refuse
// under concurrency.
func (d *DB) BeginTx(ctx context.Context, opts *sql.TxOptions) (*Tx, error) {
	if d.writer != nil {
		if err := d.writer.lock(ctx); err != nil {
			return nil, err
		}
	}
	tx, err := d.db.BeginTx(ctx, opts)
	if err != nil {
		if d.writer != nil {
			d.writer.unlock()
		}
		return nil, err
	}
	return &Tx{tx: tx, db: d}, nil
}

// InTx runs fn in a transaction and commits it. On PostgreSQL a
// transaction refused for a conflict with a concurrent one (a serialization
// failure, a deadlock, or a unique violation: a row a concurrent transaction
// inserted first) is run again, up to maxAttempts times in all, so that fn
// decides again on what is committed now; fn must have no effect outside
// the transaction. fn's own errors end it at once (after a rollback).
//
// On SQLite with SerializeWrites, fn runs in a batch with the concurrent
// writes (group commit); a batch that fails as a whole runs fn again alone.
func (d *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	return d.inTx(ctx, false, fn)
}

// QuietInTx is InTx without the OnCommit hooks, for a transaction that no
// cache of this process can be stale after (QuietExecContext's rule; the
// fax outbox's claims, outcomes and delivery attempts): the caches the
// hooks drop are kept. The commit notifications other replicas hear are the
// tables' own (pgdb.QuietComment).
func (d *DB) QuietInTx(ctx context.Context, fn func(tx *Tx) error) error {
	return d.inTx(ctx, true, fn)
}

func (d *DB) inTx(ctx context.Context, quiet bool, fn func(tx *Tx) error) error {
	if d.batched() {
		err := d.writeInBatch(ctx, &batchedWrite{fn: fn, quiet: quiet})
		if _, failed := errors.AsType[*batchFailure](err); !failed {
			return err
		}
		return d.inTxAlone(ctx, quiet, fn)
	}
	return d.retry(ctx, func() error { return d.inTxAlone(ctx, quiet, fn) })
}

// retry runs run, a transaction, and on PostgreSQL runs it again while
// PostgreSQL refuses it for a conflict (Retryable), up to maxAttempts times
// in all.
func (d *DB) retry(ctx context.Context, run func() error) error {
	for attempt := 1; ; attempt++ {
		err := run()
		if err == nil || d.dialect != Postgres || attempt == maxAttempts || !Retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

// maxAttempts bounds InTx's runs of one transaction.
const maxAttempts = 8

// InTxOnce runs fn in a transaction and commits it, with no second
// attempt: for work with effects outside the transaction, or whose caller
// acts once it has committed. fn's errors end it (after a rollback). On
// SQLite with SerializeWrites, fn runs in a batch with the concurrent writes
// (group commit), and a failure of the batch as a whole is its error.
func (d *DB) InTxOnce(ctx context.Context, fn func(tx *Tx) error) error {
	if d.batched() {
		return unwrapBatch(d.writeInBatch(ctx, &batchedWrite{fn: fn}))
	}
	return d.inTxAlone(ctx, false, fn)
}

// inTxAlone runs fn in a transaction of its own and commits it; a quiet one
// runs no OnCommit hooks.
func (d *DB) inTxAlone(ctx context.Context, quiet bool, fn func(tx *Tx) error) error {
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx.quiet = quiet
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Retryable reports whether err is PostgreSQL's refusal of a transaction
// for a conflict with a concurrent one, which a new run may not meet:
// serialization_failure (40001), deadlock_detected (40P01) or
// unique_violation (23505).
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "40001", "40P01", "23505":
		return true
	}
	return false
}

// Lock takes the transaction-scoped lock called name in the API's schema
// (PostgreSQL; on SQLite the transaction runs alone already): the
// transactions taking it, on every replica, run one at a time. For a
// decision no row lock can guard, like claiming work among every
// tenant's rows.
func (t *Tx) Lock(ctx context.Context, name string) error {
	if t.db.dialect != Postgres {
		return nil
	}
	if _, err := t.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext($1))`, name); err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	return nil
}

// Quiet keeps the transaction's commit from being announced to the other
// replicas (PostgreSQL's notify triggers, pgdb.Watch; nothing to do on
// SQLite): for frequent writes that no replica caches, such as the
// sandboxes' request journal, which would otherwise make every other
// replica drop the caches of the schema at each commit.
func (t *Tx) Quiet(ctx context.Context) error {
	if t.db.dialect != Postgres {
		return nil
	}
	if _, err := t.tx.ExecContext(ctx, `SELECT set_config('`+pgdb.QuietParam+`', 'on', true)`); err != nil {
		return fmt.Errorf("quiet: %w", err)
	}
	return nil
}

// TryLock takes, until the transaction ends, the locks it can of those
// named name:key for each of keys, without waiting, and returns the keys it
// locked, in their order: on PostgreSQL a transaction-scoped advisory lock
// per key, so concurrent transactions of every replica that claim work by
// the same keys divide it between them instead of queuing; on SQLite, where
// the transaction runs alone already, every key. Two keys may hash to one
// lock: a key is then skipped while the other is held, never taken twice.
func (t *Tx) TryLock(ctx context.Context, name string, keys []string) ([]string, error) {
	if t.db.dialect != Postgres || len(keys) == 0 {
		return keys, nil
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT k FROM unnest($1::text[]) WITH ORDINALITY AS u(k, i)
		WHERE pg_try_advisory_xact_lock(hashtext(current_schema() || ':' || $2), hashtext(k)) ORDER BY i`, keys, name)
	if err != nil {
		return nil, fmt.Errorf("try lock %s: %w", name, err)
	}
	defer rows.Close()
	var locked []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("try lock %s: %w", name, err)
		}
		locked = append(locked, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("try lock %s: %w", name, err)
	}
	return locked, nil
}

// LockRows locks, until the transaction ends, the rows query (a SELECT of
// one table, without a locking clause) finds: FOR UPDATE on PostgreSQL, so
// concurrent transactions locking one of them wait for this one to end;
// nothing on SQLite, where the transaction runs alone already. It returns
// how many rows were found.
func (t *Tx) LockRows(ctx context.Context, query string, args ...any) (int, error) {
	if t.db.dialect != Postgres {
		return 0, nil
	}
	rows, err := t.QueryContext(ctx, query+` FOR UPDATE`, args...)
	if err != nil {
		return 0, fmt.Errorf("lock rows: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("lock rows: %w", err)
	}
	return n, nil
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
	// batch is set on the transaction of a group commit, which the batch
	// ends, not the writes run in it.
	batch bool
	// quiet: its commit runs no OnCommit hooks (QuietInTx).
	quiet bool
}

// Commit commits the transaction.
func (t *Tx) Commit() error {
	if t.batch {
		return errBatchedTx
	}
	defer t.release()
	if err := t.tx.Commit(); err != nil {
		return err
	}
	if !t.quiet {
		t.db.committed()
	}
	return nil
}

// Rollback aborts the transaction; after Commit it is a no-op returning
// sql.ErrTxDone.
func (t *Tx) Rollback() error {
	if t.batch {
		return errBatchedTx
	}
	defer t.release()
	return t.tx.Rollback()
}

// writerLock is the SQLite writer (Options.SerializeWrites): a lock whose
// waiter gives up when its context ends, so a request its client abandoned
// does not wait out the writes queued before it (sync.Mutex cannot be left).
// Waiters take it in the order they came.
type writerLock chan struct{}

// lock waits for the writer, or for ctx to end (its error).
func (l writerLock) lock(ctx context.Context) error {
	select {
	case l <- struct{}{}:
		return nil
	default:
	}
	select {
	case l <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the SQLite writer: %w", ctx.Err())
	}
}

// unlock lets the next writer in.
func (l writerLock) unlock() { <-l }

// release lets the next writer in, once.
func (t *Tx) release() {
	if t.db.writer != nil {
		t.done.Do(t.db.writer.unlock)
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
	return queryOn(ctx, st, err, t.tx, t.db.Rebind(query), args)
}

// QueryRowContext runs a query that returns at most one row within the
// transaction.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *Row {
	st, err := t.bind(ctx, query)
	return queryRowOn(ctx, st, err, t.tx, t.db.Rebind(query), args)
}

// ExecContext runs a statement that returns no rows within the transaction.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.bind(ctx, query)
	return execOn(ctx, st, err, t.tx, t.db.Rebind(query), args)
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
