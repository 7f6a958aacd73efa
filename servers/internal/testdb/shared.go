package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"strings"
	"testing"

	"github.com/apistack/apistack/servers/internal/pgdb"
)

// OpenShared creates a fresh schema for one API on the test run's PostgreSQL
// server (whatever the run's backend), migrates it, and returns the server's
// URL and the schema's name, for tests that open it several times as the
// replicas of a service do: pgdb.Open(ctx, url, schema, m.Postgres) each.
// The schema is dropped when t ends, after the cleanups registered later
// (the replicas') have run.
func OpenShared(t testing.TB, m Migrations) (url, schema string) {
	t.Helper()
	url = PostgresURL(t)
	schema = m.Schema + "_" + strings.ToLower(rand.Text()[:10])
	t.Cleanup(func() { dropSchema(url, schema) })
	db, err := pgdb.Open(context.Background(), url, schema, m.Postgres)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return url, schema
}

// OpenSchemaTwice returns two connection pools on one fresh PostgreSQL
// schema (OpenShared), each opened as a replica opens it (pgdb.Open: the
// second finds the migrations applied): what two replicas of an API sharing
// a database hold. Both are closed, and the schema dropped, when t ends.
func OpenSchemaTwice(t testing.TB, m Migrations) (first, second *sql.DB) {
	t.Helper()
	url, schema := OpenShared(t, m)
	open := func() *sql.DB {
		t.Helper()
		db, err := pgdb.Open(context.Background(), url, schema, m.Postgres)
		if err != nil {
			t.Fatalf("testdb: open schema %s: %v", schema, err)
		}
		// Registered after OpenShared's drop, so run before it.
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	return open(), open()
}
