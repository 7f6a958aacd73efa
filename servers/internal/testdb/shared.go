package testdb

import (
	"context"
	"crypto/rand"
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
