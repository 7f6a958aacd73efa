// Package sqlitedb opens the embedded SQLite database of a service and brings
// its schema up to date with the service's embedded goose migrations.
//
// Every service keeps its own database file under the data directory, so the
// services can be migrated, backed up and later moved to PostgreSQL one at a
// time. The SQL the services write stays portable (no SQLite-only syntax
// beyond what PostgreSQL also accepts) for that reason.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// Option tunes Open.
type Option func(*options)

type options struct {
	fullSync   bool
	quickCheck time.Duration
}

// WithFullSync makes every commit wait for the disk (synchronous=FULL), so a
// power loss takes back no acknowledged write either.
func WithFullSync(full bool) Option {
	return func(o *options) { o.fullSync = full }
}

// poolSize is how many connections a database keeps open: enough for the
// concurrent readers of a loaded 2-to-8-core machine, few enough that each
// connection's prepared statements and page cache stay small.
var poolSize = min(max(4*runtime.GOMAXPROCS(0), 8), 32)

// Open opens (creating when needed) the SQLite database at path in WAL mode
// and applies every migration in migrations (a directory of goose SQL files at
// its root) that the database has not seen yet.
//
// Write transactions take the write lock at BEGIN (_txlock=immediate), so two
// writers queue on busy_timeout instead of failing with SQLITE_BUSY when one of
// them tries to upgrade a read lock.
//
// The database is readable by its owner only (0600), and so are its -wal and
// -shm files, which SQLite creates with the database's mode; files an earlier
// version left 0644 are made 0600.
//
// A commit is durable against a crash of the process (kill -9 loses no
// acknowledged write: the commit is in the operating system's hands before
// it returns). By default it is not flushed to the disk at every commit
// (synchronous=NORMAL, SQLite's recommendation for WAL mode), so a power
// loss may take back the last commits before a checkpoint; WithFullSync
// flushes every commit (synchronous=FULL), at the price of one flush per
// write (about 2 ms on the machines this is measured on, which caps writes
// at a few hundred per second).
func Open(ctx context.Context, path string, migrations fs.FS, opts ...Option) (*sql.DB, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	if err := makePrivate(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	if o.fullSync {
		q.Add("_pragma", "synchronous(FULL)")
	} else {
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	q.Set("_txlock", "immediate")
	dsn := "file:" + filepath.ToSlash(path) + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Keep every connection open: opening one costs a file open, the pragmas
	// and, for each statement, a prepare. WAL lets the readers run side by
	// side; writers queue (sqldb.Options.SerializeWrites).
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open %s: %w", path, err), db.Close())
	}
	if o.quickCheck > 0 {
		if err := QuickCheck(ctx, db, path, o.quickCheck); err != nil {
			return nil, errors.Join(err, db.Close())
		}
	}
	if err := incrementalVacuum(ctx, db); err != nil {
		return nil, errors.Join(fmt.Errorf("open %s: %w", path, err), db.Close())
	}
	if err := Migrate(ctx, db, migrations); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

// incrementalVacuum makes the database give the pages its deletes free back
// to the file system on ReclaimSpace (auto_vacuum=INCREMENTAL). A database
// made without it is rewritten once, by VACUUM, the only way to switch it
// on (a new, empty database at once; an old one in the time a copy takes).
func incrementalVacuum(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var mode int
	if err := conn.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return fmt.Errorf("read auto_vacuum: %w", err)
	}
	const incremental = 2
	if mode == incremental {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return fmt.Errorf("set auto_vacuum: %w", err)
	}
	// A database with no table yet takes the setting as it is; only one
	// that has tables needs the VACUUM.
	if err := conn.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return fmt.Errorf("read auto_vacuum: %w", err)
	}
	if mode == incremental {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("vacuum to switch auto_vacuum on: %w", err)
	}
	return nil
}

// ReclaimSpace gives the pages that deletes freed in db (a database Open
// opened) back to the file system: the file shrinks by them once the
// write-ahead log is checkpointed, which it is here too. It is for after a
// large delete (a sandbox and its journal): it writes, and holds the
// database's writer while it does. On another database it does nothing.
func ReclaimSpace(ctx context.Context, db *sql.DB) error {
	if _, ok := db.Driver().(*sqlite.Driver); !ok {
		return nil // PostgreSQL: the rows are gone, autovacuum reuses their space
	}
	if _, err := db.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		return fmt.Errorf("incremental vacuum: %w", err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// makePrivate creates the database file at path with mode 0600 if it is
// missing, and sets 0600 on it and on the -wal, -shm and -journal files beside
// it that exist.
func makePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("make %s private: %w", p, err)
		}
	}
	return nil
}

// WithQuickCheck has Open check the database's integrity (PRAGMA
// quick_check) for at most d before it is used: a damaged database is
// refused at start rather than failing the first request that reads the
// damage. A check that takes longer than d (a large database) is given up
// and the database used unchecked.
func WithQuickCheck(d time.Duration) Option {
	return func(o *options) { o.quickCheck = d }
}

// quickCheckProblems is how many problems QuickCheck reports at most.
const quickCheckProblems = 3

// QuickCheck runs PRAGMA quick_check on db (the file at path) for at most d
// and returns an error naming the file and its first problems if it is
// damaged; nil if it is sound or the check ran out of time.
func QuickCheck(ctx context.Context, db *sql.DB, path string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA quick_check(%d)", quickCheckProblems))
	var problems []string
	if err == nil {
		for rows.Next() {
			var line string
			if err = rows.Scan(&line); err != nil {
				break
			}
			problems = append(problems, line)
		}
		err = errors.Join(err, rows.Err(), rows.Close())
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil // out of time: a large database starts unchecked
	case err != nil && !isCorrupt(err):
		return fmt.Errorf("check %s: %w", path, err)
	case err != nil:
		problems = append(problems, err.Error())
	case len(problems) == 1 && problems[0] == "ok":
		return nil
	}
	return fmt.Errorf("%s is damaged (PRAGMA quick_check: %s): restore it from a backup, or recover what is left with sqlite3's .recover",
		path, strings.Join(problems, "; "))
}

// isCorrupt reports whether err is SQLite's "database disk image is
// malformed" or "file is not a database".
func isCorrupt(err error) bool {
	code := Code(err)
	return code == codeCorrupt || code == codeNotADB
}

// SQLite's primary result codes that apistack tells apart.
const (
	codeCorrupt = 11 // SQLITE_CORRUPT
	codeFull    = 13 // SQLITE_FULL
	codeNotADB  = 26 // SQLITE_NOTADB
)

// Code returns the primary SQLite result code of err (the low byte of an
// extended one), or 0 when err is not an SQLite error.
func Code(err error) int {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code() & 0xff
	}
	return 0
}

// IsFull reports whether err is SQLite's "database or disk is full"
// (SQLITE_FULL): the disk, or the file system's quota, has no room left.
func IsFull(err error) bool { return Code(err) == codeFull }

// Migrate applies the pending migrations of migrations to db.
func Migrate(ctx context.Context, db *sql.DB, migrations fs.FS) error {
	provider, err := goose.NewProvider(goose.DialectSQLite3, db, migrations)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// WriteProbe commits a write that changes nothing (the header's
// user_version set to its own value): it appends to the write-ahead log as
// any commit does, so it fails while commits fail, the disk full
// (SQLITE_FULL) or the file unwritable included, when a ping still answers.
// A readiness check calls it.
func WriteProbe(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("write probe: %w", err)
	}
	defer conn.Close()
	var v int64
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("write probe: %w", err)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		return fmt.Errorf("write probe: the database takes no writes: %w", err)
	}
	return nil
}
