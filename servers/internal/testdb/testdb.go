// Package testdb gives each server test its database on the backend the run
// is for: SQLite (the default) or PostgreSQL (APISTACK_TEST_BACKEND=postgres),
// so the whole suite of every API runs on both engines. `make test` runs it
// once per backend.
//
// On PostgreSQL each test gets a schema of its own in a shared database,
// dropped when the test ends; the server is APISTACK_TEST_POSTGRES_URL when
// set, otherwise a throwaway cluster this test process starts from the
// machine's PostgreSQL binaries (initdb and postgres, as the postgres user
// when run as root). Under CI (CI=true) a PostgreSQL run that finds no
// PostgreSQL fails; it never skips.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// BackendVariable selects the backend of a test run: "sqlite" (the default)
// or "postgres".
const BackendVariable = "APISTACK_TEST_BACKEND"

// Backend is the engine a test run uses.
type Backend string

// The backends.
const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Current returns the backend of this test run, from APISTACK_TEST_BACKEND.
// It panics on an unknown name: a typo must not quietly test SQLite.
func Current() Backend {
	switch b := Backend(strings.ToLower(os.Getenv(BackendVariable))); b {
	case "", SQLite:
		return SQLite
	case Postgres:
		return Postgres
	default:
		panic(fmt.Sprintf("testdb: %s=%q: want sqlite or postgres", BackendVariable, b))
	}
}

// Migrations are an API's schema: its name and its goose migrations in
// each dialect (an API's descriptor gives them: pam.API.Migrations()).
type Migrations = descriptor.Migrations

// Open returns a fresh, migrated database for one API on the current
// backend, closed (and on PostgreSQL dropped) when t ends.
func Open(t testing.TB, m Migrations) *sql.DB {
	t.Helper()
	db, err := open(t, Current(), m)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return db
}

// OpenOn is Open on a given backend, for the tests that compare the two.
func OpenOn(t testing.TB, b Backend, m Migrations) *sql.DB {
	t.Helper()
	db, err := open(t, b, m)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return db
}

func open(t testing.TB, b Backend, m Migrations) (*sql.DB, error) {
	ctx := context.Background()
	if b == SQLite {
		db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), m.Schema+".db"), m.SQLite)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = db.Close() })
		return db, nil
	}
	base := PostgresURL(t)
	schema := m.Schema + "_" + strings.ToLower(rand.Text()[:10])
	db, err := pgdb.Open(ctx, base, schema, m.Postgres)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		_ = db.Close()
		dropSchema(base, schema)
	})
	return db, nil
}

// PostgresURL returns the URL of the PostgreSQL server of this test run
// (starting the throwaway cluster on first use). Without PostgreSQL the test
// fails under CI and skips otherwise.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u, err := postgresURL()
	if err != nil {
		if os.Getenv("CI") != "" || Current() == Postgres {
			t.Fatalf("testdb: PostgreSQL is required: %v", err)
		}
		t.Skipf("testdb: no PostgreSQL: %v", err)
	}
	return u
}

// NewDatabase creates an empty database on the test run's PostgreSQL server
// and returns its URL; it is dropped when t ends. The replica tests point
// several server processes at one.
func NewDatabase(t testing.TB) string {
	t.Helper()
	base := PostgresURL(t)
	name := "apistack_" + strings.ToLower(rand.Text()[:12])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE ` + pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("testdb: create database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + pgx.Identifier{name}.Sanitize() + ` WITH (FORCE)`)
	})
	return withDatabase(base, name)
}

// withDatabase returns base with its database name replaced.
func withDatabase(base, name string) string {
	if u, err := url.Parse(base); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return base + " dbname=" + name // a key=value connection string: the last value wins
}

func dropSchema(base, schema string) {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return
	}
	defer db.Close()
	_, _ = db.Exec(`DROP SCHEMA IF EXISTS ` + pgx.Identifier{schema}.Sanitize() + ` CASCADE`)
}

// Opener returns a function opening an API's database for t on the run's
// backend, each call a fresh one, for harnesses that open through a
// function (servers/stack's OpenDBFunc).
func Opener(t testing.TB) func(ctx context.Context, m Migrations) (*sql.DB, error) {
	return func(_ context.Context, m Migrations) (*sql.DB, error) {
		return open(t, Current(), m)
	}
}
