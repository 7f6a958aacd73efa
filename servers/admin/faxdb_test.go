package admin_test

import (
	"database/sql"
	"testing"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/testdb"
)

// openFaxDB returns a fresh, migrated fax database, closed when t ends.
// SQLite whatever the run's backend: fax has no PostgreSQL migrations on this
// branch yet; once it has (fax.PostgresMigrations), this is testdb.Open.
func openFaxDB(t *testing.T) *sql.DB {
	t.Helper()
	return testdb.OpenOn(t, testdb.SQLite, testdb.Migrations{Schema: "fax", SQLite: fax.Migrations()})
}
