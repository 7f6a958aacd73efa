package pgdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// How replicas hear of each other's commits.
//
// Every table of an API's schema (but quietTables) carries a row trigger
// that, in the writing transaction (unless it is quiet: QuietParam),
// notifies the channel named after the schema with a payload naming the
// writer's pool (replicaParam), the table and the kind of change (Change).
// PostgreSQL delivers a notification only if and when its transaction
// commits, once per transaction and payload, in commit order, to every
// session listening on the channel. Each replica keeps one such session per
// API (Watch) and drops the caches that depend on what changed when it
// hears a commit of another pool.
//
// A transaction that notifies takes, at commit, a lock that is one for the
// whole cluster (PostgreSQL queues notifications in commit order), so the
// announcing commits of every replica are serialized, and each one wakes
// every other replica. A table whose writes no cache depends on is therefore
// quiet (QuietComment), and one whose inserted rows no cache can be missing
// (no cache holds the absence of a row, or lists the table) announces its
// updates and deletes alone (QuietInsertsComment).
//
// A cache is trusted only while its replica is listening (Watcher.Listening):
// when the listening session is lost, and until it listens again, every
// lookup goes to the database; on listening again the caches are dropped,
// since commits may have gone unheard meanwhile. A session that died
// silently (no error, no traffic) is found by a heartbeat: after
// HeartbeatInterval without a notification the session runs a query, which
// must answer within HeartbeatTimeout.
//
// So a commit is heard by another replica either through its notification
// (the delivery latency: measured in BenchmarkCrossReplicaInvalidation) or,
// when the listening session is lost, the replica stops trusting its caches
// within HeartbeatInterval + HeartbeatTimeout of the loss.

// replicaParam is the run-time parameter naming the pool a connection
// belongs to (a random name per Open).
const replicaParam = "apistack.replica"

// The heartbeat of a listening session.
const (
	// HeartbeatInterval is how long a listening session stays silent before
	// it is asked to prove it is alive.
	HeartbeatInterval = time.Second
	// HeartbeatTimeout is how long the session has to answer.
	HeartbeatTimeout = time.Second
	// reconnectDelay spaces the attempts to listen again.
	reconnectDelay = 250 * time.Millisecond
)

// QuietParam is the run-time parameter that, set to "on" for a transaction
// (sqldb.Tx.Quiet), keeps its commit from being announced: for writes no
// cache depends on.
const QuietParam = "apistack.quiet"

// quietTables are the tables whose writes no cache depends on, so they
// notify nobody: the migrations' bookkeeping and the rate limits (written
// by nearly every request). An API declares its own such tables with
// QuietComment.
var quietTables = []string{"goose_db_version", "rate_limits"}

// QuietComment starts the comment (COMMENT ON TABLE, in the API's
// PostgreSQL migrations) of a table whose writes no replica's cache depends
// on: its commits notify no replica. A notification costs the writing
// transaction a trigger call and a place in PostgreSQL's notification
// queue, and every listening replica (its PostgreSQL backend and its
// watcher) a wake-up; a table written several times per unit of work (the
// fax outbox's claims, outcomes and attempts) is worth sparing them.
const QuietComment = "apistack: quiet"

// QuietInsertsComment starts the comment of a table whose inserts no
// replica's cache depends on, though its updates and deletes do: no cache
// holds the absence of one of its rows or lists its rows (an issued token
// is cached once read, a revoked one must be heard of). Its trigger fires on
// UPDATE and DELETE only, so the inserts commit without the cluster-wide
// notification lock and wake no replica.
const QuietInsertsComment = "apistack: inserts unannounced"

// notifyFunction is the trigger function of every table but quietTables.
const notifyFunction = `CREATE OR REPLACE FUNCTION apistack_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF current_setting('` + QuietParam + `', true) = 'on' THEN
		RETURN NULL;
	END IF;
	PERFORM pg_notify(TG_TABLE_SCHEMA, coalesce(current_setting('` + replicaParam + `', true), '') || ' ' || TG_TABLE_NAME || ' ' || TG_OP);
	RETURN NULL;
END
$$`

// installNotify gives every table of schema but the quiet ones
// (quietTables, QuietComment) the trigger that announces its commits (see
// Watch), on UPDATE and DELETE alone for a table whose inserts are
// unannounced (QuietInsertsComment), and takes it off (or changes it on) a
// table a migration has made quiet since. It
// runs after the migrations at every Open, so a table a later migration
// adds is covered the next time a replica starts; replicas starting
// together queue on an advisory lock.
func installNotify(ctx context.Context, db *sql.DB, schema string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("notify triggers: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('apistack: notify triggers'))`); err != nil {
		return fmt.Errorf("notify triggers: %w", err)
	}
	if _, err := tx.ExecContext(ctx, notifyFunction); err != nil {
		return fmt.Errorf("notify triggers: %w", err)
	}
	// The tables whose trigger is not what their comment asks for: missing
	// (want 'all' or 'changes', has 'none'), no longer wanted (want 'none'),
	// or firing on the wrong events. The trigger's events are bits of
	// pg_trigger.tgtype: 4 INSERT, 8 DELETE, 16 UPDATE.
	rows, err := tx.QueryContext(ctx, `
		SELECT relname, has, want FROM (
			SELECT c.relname,
				CASE WHEN c.relname = ANY($2) OR coalesce(obj_description(c.oid, 'pg_class'), '') LIKE $3 || '%' THEN 'none'
					WHEN coalesce(obj_description(c.oid, 'pg_class'), '') LIKE $4 || '%' THEN 'changes'
					ELSE 'all' END AS want,
				coalesce((SELECT CASE WHEN t.tgtype & 4 <> 0 THEN 'all' ELSE 'changes' END
					FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'apistack_notify'), 'none') AS has
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
		) AS t WHERE has <> want
		ORDER BY relname`, schema, quietTables, QuietComment, QuietInsertsComment)
	if err != nil {
		return fmt.Errorf("notify triggers: %w", err)
	}
	type change struct {
		table, has, want string
	}
	var changes []change
	for rows.Next() {
		var c change
		if err := rows.Scan(&c.table, &c.has, &c.want); err != nil {
			_ = rows.Close()
			return fmt.Errorf("notify triggers: %w", err)
		}
		changes = append(changes, c)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("notify triggers: %w", err)
	}
	for _, c := range changes {
		table := pgx.Identifier{schema, c.table}.Sanitize()
		var stmts []string
		if c.has != "none" {
			stmts = append(stmts, `DROP TRIGGER apistack_notify ON `+table)
		}
		events := map[string]string{"all": "INSERT OR UPDATE OR DELETE", "changes": "UPDATE OR DELETE"}[c.want]
		if events != "" {
			stmts = append(stmts, `CREATE TRIGGER apistack_notify AFTER `+events+` ON `+table+` FOR EACH ROW EXECUTE FUNCTION apistack_notify()`)
		}
		for _, stmt := range stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("notify trigger on %s: %w", c.table, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("notify triggers: %w", err)
	}
	return nil
}

// Watcher listens, on a session of its own, for the commits other pools
// make to one schema. It is safe for concurrent use.
type Watcher struct {
	db      *sql.DB
	cfg     *pgconn.Config
	channel string
	self    string
	heard   func(Change)

	// configured is closed once cfg, channel and self are set (configure).
	configured chan struct{}

	listening atomic.Bool
	heardN    atomic.Uint64

	mu    sync.Mutex
	syncs map[string]chan struct{}
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// Change is what a commit another pool made changed: one notification
// names one table and one kind of change (a transaction that changed
// several tables, or one table in several ways, sends one of each). The
// zero Change means anything may have changed: the watcher listens again
// after losing its session (commits may have gone unheard meanwhile), or
// the writer announced without naming the table (a replica of an older
// version).
type Change struct {
	// Table is the table changed, in the watched schema.
	Table string
	// Op is the kind of change: "INSERT", "UPDATE" or "DELETE".
	Op string
}

// Any reports whether c may stand for any change (the zero Change).
func (c Change) Any() bool { return c.Table == "" }

// parseChange reads a notification's payload, "<pool> <table> <op>", and
// reports the pool that sent it; a payload of the pool's name alone (an
// older replica's) is the zero Change.
func parseChange(payload string) (pool string, c Change) {
	pool, rest, ok := strings.Cut(payload, " ")
	if !ok {
		return payload, Change{}
	}
	table, op, ok := strings.Cut(rest, " ")
	if !ok || table == "" || op == "" {
		return pool, Change{}
	}
	return pool, Change{Table: table, Op: op}
}

// Watch starts listening for the commits other pools make to the schema of
// db (a pool opened by Open) and calls heard after each one with what it
// changed, and with the zero Change each time it listens again after losing
// its session (commits may have gone unheard meanwhile). heard runs on the
// listening goroutine, one call at a time, in commit order. The watcher
// stops by Close, or by itself once db is closed.
//
// The watcher reads the pool's settings from one of its connections, and
// tries again until it can (a pool not opened by Open, which names no
// schema, is never listened for: its caches never answer).
func Watch(db *sql.DB, heard func(Change)) *Watcher {
	w := &Watcher{
		db: db, heard: heard, configured: make(chan struct{}),
		syncs: map[string]chan struct{}{}, stop: make(chan struct{}), done: make(chan struct{}),
	}
	go w.run()
	return w
}

// errNotWatchable: the pool names no schema or pool (not opened by Open).
var errNotWatchable = errors.New("watch: the pool was not opened by pgdb.Open (no schema or pool name)")

// configure reads the pool's settings for the listening session.
func (w *Watcher) configure(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := w.db.Conn(cctx)
	if err != nil {
		return w.poolError(ctx, fmt.Errorf("watch: %w", err))
	}
	var cfg *pgx.ConnConfig
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNotWatchable
		}
		cfg = c.Conn().Config()
		return nil
	})
	_ = conn.Close()
	if err != nil {
		return err
	}
	channel, self := cfg.RuntimeParams["search_path"], cfg.RuntimeParams[replicaParam]
	if !schemaName.MatchString(channel) || self == "" {
		return errNotWatchable
	}
	w.cfg, w.channel, w.self = &cfg.Config, channel, self
	w.cfg.OnNotification = w.notified
	w.cfg.RuntimeParams["application_name"] = "apistack watch " + self
	close(w.configured)
	return nil
}

// WatcherName returns the application_name of the listening session of the
// watcher of db (whose pool db is), which names the pool: operators and tests
// find the session by it in pg_stat_activity.
func WatcherName(db *sql.DB) string {
	return "apistack watch " + poolName(db)
}

// poolName returns the name Open gave db's pool ("" when it has none).
func poolName(db *sql.DB) string {
	conn, err := db.Conn(context.Background())
	if err != nil {
		return ""
	}
	defer func() { _ = conn.Close() }()
	var name string
	_ = conn.Raw(func(dc any) error {
		if c, ok := dc.(*stdlib.Conn); ok {
			name = c.Conn().Config().RuntimeParams[replicaParam]
		}
		return nil
	})
	return name
}

// Listening reports whether the watcher hears every commit now: what was
// cached from the database may be trusted only while it does.
func (w *Watcher) Listening() bool { return w.listening.Load() }

// Heard returns how many commits of other pools (and re-listens) the
// watcher has reported so far.
func (w *Watcher) Heard() uint64 { return w.heardN.Load() }

// Close stops the watcher and waits for its session to end.
func (w *Watcher) Close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// Sync returns once the watcher has heard, and reported, every commit made
// to the schema before Sync was called: it sends a notification of its own
// through db and waits for it to come back (notifications arrive in commit
// order). Tests use it to wait for a commit through another replica to
// reach this one.
func (w *Watcher) Sync(ctx context.Context) error {
	token := "sync:" + rand.Text()
	ch := make(chan struct{})
	w.mu.Lock()
	w.syncs[token] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.syncs, token)
		w.mu.Unlock()
	}()
	for {
		if w.Listening() {
			<-w.configured // set before the watcher listens
			if _, err := w.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, w.channel, token); err != nil {
				return fmt.Errorf("sync: %w", err)
			}
			wait := time.NewTimer(HeartbeatInterval + HeartbeatTimeout)
			select {
			case <-ch:
				wait.Stop()
				return nil
			case <-ctx.Done():
				wait.Stop()
				return ctx.Err()
			case <-wait.C:
				// The session was lost before the notification came back:
				// send another once listening again.
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(reconnectDelay):
		}
	}
}

// notified handles one notification (called by pgconn while the session
// reads).
func (w *Watcher) notified(_ *pgconn.PgConn, n *pgconn.Notification) {
	if n.Channel != w.channel {
		return
	}
	if strings.HasPrefix(n.Payload, "sync:") {
		w.mu.Lock()
		ch := w.syncs[n.Payload]
		delete(w.syncs, n.Payload)
		w.mu.Unlock()
		if ch != nil {
			close(ch)
		}
		return
	}
	pool, c := parseChange(n.Payload)
	if pool == w.self {
		return
	}
	w.report(c)
}

func (w *Watcher) report(c Change) {
	w.heardN.Add(1)
	w.heard(c)
}

// run keeps a listening session until the watcher stops.
func (w *Watcher) run() {
	defer close(w.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		err := w.configure(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil || errors.Is(err, errPoolClosed) || errors.Is(err, errNotWatchable) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(reconnectDelay):
		}
	}
	for {
		err := w.listen(ctx)
		w.listening.Store(false)
		if ctx.Err() != nil || errors.Is(err, errPoolClosed) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(reconnectDelay):
		}
	}
}

var errPoolClosed = errors.New("the pool is closed")

// listen opens a session, listens, reports a re-listen, and then waits for
// notifications until the session fails.
func (w *Watcher) listen(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgconn.ConnectConfig(cctx, w.cfg)
	cancel()
	if err != nil {
		return w.poolError(ctx, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{w.channel}.Sanitize()).Close(); err != nil {
		return err
	}
	// Commits made while no session listened went unheard: drop every
	// cache before trusting any again.
	w.report(Change{})
	w.listening.Store(true)
	for {
		wctx, cancel := context.WithTimeout(ctx, HeartbeatInterval)
		err := conn.WaitForNotification(wctx)
		cancel()
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !pgconn.Timeout(err) {
			return err
		}
		hctx, cancel := context.WithTimeout(ctx, HeartbeatTimeout)
		err = conn.Exec(hctx, `SELECT 1`).Close()
		cancel()
		if err != nil {
			return err
		}
		if err := w.poolError(ctx, nil); err != nil {
			return err
		}
	}
}

// poolError returns errPoolClosed when the watched pool was closed (the
// watcher then stops), else err.
func (w *Watcher) poolError(ctx context.Context, err error) error {
	pctx, cancel := context.WithTimeout(ctx, HeartbeatTimeout)
	defer cancel()
	if perr := w.db.PingContext(pctx); perr != nil && strings.Contains(perr.Error(), "database is closed") {
		return errPoolClosed
	}
	return err
}

// Done is closed once the watcher has stopped.
func (w *Watcher) Done() <-chan struct{} { return w.done }
