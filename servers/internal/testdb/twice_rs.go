package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"strings"
	"testing"

	"github.com/apistack/apistack/servers/internal/pgdb"
)

// OpenSchemaTwice returns two connection pools on one fresh PostgreSQL
// schema of the test run's server, migrated with m.Postgres: what two
// replicas of an API sharing a database hold. Each pool is opened as a
// replica opens it (pgdb.Open: the second finds the migrations applied).
// Both are closed, and the schema dropped, when t ends. It runs on
// PostgreSQL whatever the run's backend (replicas share nothing else); like
// PostgresURL it skips without PostgreSQL, except under CI.
func OpenSchemaTwice(t testing.TB, m Migrations) (first, second *sql.DB) {
	t.Helper()
	base := PostgresURL(t)
	schema := m.Schema + "_" + strings.ToLower(rand.Text()[:10])
	t.Cleanup(func() { dropSchema(base, schema) })
	ctx := context.Background()
	var dbs [2]*sql.DB
	for i := range dbs {
		db, err := pgdb.Open(ctx, base, schema, m.Postgres)
		if err != nil {
			t.Fatalf("testdb: open schema %s (pool %d): %v", schema, i+1, err)
		}
		// Registered after the drop, so run before it.
		t.Cleanup(func() { _ = db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}
