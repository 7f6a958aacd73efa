package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// DropTables drops every table of db's schema (SQLite, or the PostgreSQL
// schema the connection works in), leaving the database reachable: every
// query then fails with an error of the SQL itself, an unexpected failure
// (500), unlike a database that cannot be reached (503).
func DropTables(t testing.TB, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	list := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	var driver string
	if err := db.QueryRowContext(ctx, `SELECT 'postgres' WHERE current_schema() IS NOT NULL`).Scan(&driver); err == nil {
		list = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`
	}
	rows, err := db.QueryContext(ctx, list)
	if err != nil {
		t.Fatalf("testdb: list tables: %v", err)
	}
	tables := Strings(t, rows)
	// Tables referenced by others go once those are gone: pass again over
	// what is left.
	passes := len(tables) + 1
	for pass := 0; len(tables) > 0; pass++ {
		var left []string
		var lastErr error
		for _, name := range tables {
			if _, err := db.ExecContext(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %q CASCADE`, name)); err == nil {
				continue
			}
			if _, err := db.ExecContext(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %q`, name)); err != nil { // SQLite has no CASCADE
				left, lastErr = append(left, name), err
			}
		}
		if len(left) > 0 && pass >= passes {
			t.Fatalf("testdb: drop tables %v: %v", left, lastErr)
		}
		tables = left
	}
}

// Strings reads rows of one text column and closes them; an error reading
// them fails t.
func Strings(t testing.TB, rows *sql.Rows) []string {
	t.Helper()
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatalf("testdb: read rows: %v", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("testdb: read rows: %v", err)
	}
	return out
}
