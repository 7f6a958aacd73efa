// Package schemacheck reads the schema a migration set built, on SQLite or
// PostgreSQL, into one engine-neutral description, so that a test can hold
// an API's two migration sets to the same schema: per table its columns
// (type family and nullability), primary key, unique keys and indexes.
package schemacheck

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Column is one column: its type family (Family) and whether it takes NULL.
type Column struct {
	Family  string
	NotNull bool
}

// Index is a unique key or an index: its columns in order (a PostgreSQL
// index's INCLUDE columns after its keys, as SQLite lists a covering index's
// columns), and whether it is partial (WHERE; the predicate's text is each
// engine's own and is not compared).
type Index struct {
	Columns []string
	Partial bool
}

func (ix Index) String() string {
	s := "(" + strings.Join(ix.Columns, ", ") + ")"
	if ix.Partial {
		s += " WHERE …"
	}
	return s
}

// Table is one table's description.
type Table struct {
	Columns    map[string]Column
	PrimaryKey []string
	// Unique holds every unique key but the primary key, from a UNIQUE
	// constraint or a CREATE UNIQUE INDEX alike (the engines name the
	// former differently), as Index.String.
	Unique []string
	// Indexes are the other indexes, by name.
	Indexes map[string]Index
}

// Schema is every table of a schema but goose's own, by name.
type Schema map[string]Table

// Family maps a declared SQL type onto the family both engines agree on:
// integer, text, bytes, bool, timestamp, real; anything else as it is.
func Family(declared string) string {
	t := strings.ToLower(strings.TrimSpace(declared))
	switch {
	case t == "integer" || t == "bigint" || t == "smallint" || t == "int" || t == "int4" || t == "int8":
		return "integer"
	case t == "text" || strings.HasPrefix(t, "varchar") || strings.HasPrefix(t, "character varying"):
		return "text"
	case t == "blob" || t == "bytea":
		return "bytes"
	case t == "boolean" || t == "bool":
		return "bool"
	case strings.HasPrefix(t, "timestamp"):
		return "timestamp"
	case t == "real" || t == "double precision" || t == "float8":
		return "real"
	}
	return t
}

// ignored are the tables of the migration tool itself.
func ignored(table string) bool {
	return table == "goose_db_version" || strings.HasPrefix(table, "sqlite_")
}

// ReadSQLite describes the schema of a SQLite database.
func ReadSQLite(ctx context.Context, db *sql.DB) (Schema, error) {
	names, err := strings1(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	out := Schema{}
	for _, name := range names {
		if ignored(name) {
			continue
		}
		t, err := readSQLiteTable(ctx, db, name)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

func readSQLiteTable(ctx context.Context, db *sql.DB, name string) (Table, error) {
	t := Table{Columns: map[string]Column{}, Indexes: map[string]Index{}}
	rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, name)
	if err != nil {
		return t, err
	}
	type pkCol struct {
		name string
		pos  int
	}
	var pk []pkCol
	for rows.Next() {
		var col, typ string
		var notNull bool
		var pos int
		if err := rows.Scan(&col, &typ, &notNull, &pos); err != nil {
			_ = rows.Close()
			return t, err
		}
		if pos > 0 {
			pk = append(pk, pkCol{col, pos})
			// SQLite lets a non-INTEGER primary key column hold NULL
			// unless it says NOT NULL; no row of ours ever does, and
			// PostgreSQL refuses it: a key column counts as NOT NULL.
			notNull = true
		}
		t.Columns[col] = Column{Family: Family(typ), NotNull: notNull}
	}
	if err := closeRows(rows); err != nil {
		return t, err
	}
	sort.Slice(pk, func(i, j int) bool { return pk[i].pos < pk[j].pos })
	for _, c := range pk {
		t.PrimaryKey = append(t.PrimaryKey, c.name)
	}

	rows, err = db.QueryContext(ctx, `SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, name)
	if err != nil {
		return t, err
	}
	type indexRow struct {
		name, origin    string
		unique, partial bool
	}
	var list []indexRow
	for rows.Next() {
		var r indexRow
		if err := rows.Scan(&r.name, &r.unique, &r.origin, &r.partial); err != nil {
			_ = rows.Close()
			return t, err
		}
		list = append(list, r)
	}
	if err := closeRows(rows); err != nil {
		return t, err
	}
	for _, r := range list {
		if r.origin == "pk" {
			continue
		}
		cols, err := strings1(ctx, db, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, r.name)
		if err != nil {
			return t, err
		}
		ix := Index{Columns: cols, Partial: r.partial}
		if r.unique {
			t.Unique = append(t.Unique, ix.String())
		} else {
			t.Indexes[r.name] = ix
		}
	}
	sort.Strings(t.Unique)
	return t, nil
}

// ReadPostgres describes the tables of db's current schema (its search_path).
func ReadPostgres(ctx context.Context, db *sql.DB) (Schema, error) {
	out := Schema{}
	rows, err := db.QueryContext(ctx, `
		SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO'
		FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table, col, typ string
		var notNull bool
		if err := rows.Scan(&table, &col, &typ, &notNull); err != nil {
			_ = rows.Close()
			return nil, err
		}
		if ignored(table) {
			continue
		}
		t, ok := out[table]
		if !ok {
			t = Table{Columns: map[string]Column{}, Indexes: map[string]Index{}}
		}
		t.Columns[col] = Column{Family: Family(typ), NotNull: notNull}
		out[table] = t
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}

	rows, err = db.QueryContext(ctx, `
		SELECT t.relname, i.relname, ix.indisprimary, ix.indisunique, ix.indpred IS NOT NULL,
		       array_to_string(ARRAY(
		           SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
		           JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
		           ORDER BY k.ord), ',')
		FROM pg_index ix
		JOIN pg_class t ON t.oid = ix.indrelid
		JOIN pg_class i ON i.oid = ix.indexrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE n.nspname = current_schema()
		ORDER BY t.relname, i.relname`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table, index, cols string
		var primary, unique, partial bool
		if err := rows.Scan(&table, &index, &primary, &unique, &partial, &cols); err != nil {
			_ = rows.Close()
			return nil, err
		}
		t, ok := out[table]
		if !ok {
			continue
		}
		ix := Index{Columns: strings.Split(cols, ","), Partial: partial}
		switch {
		case primary:
			t.PrimaryKey = ix.Columns
		case unique:
			t.Unique = append(t.Unique, ix.String())
		default:
			t.Indexes[index] = ix
		}
		out[table] = t
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for name, t := range out {
		sort.Strings(t.Unique)
		out[name] = t
	}
	return out, nil
}

// Diff lists, one sentence each and sorted, how schema b differs from a
// (a named first in each sentence, as "sqlite" and "postgres" say).
func Diff(aName string, a Schema, bName string, b Schema) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, name := range union(a, b) {
		ta, inA := a[name]
		tb, inB := b[name]
		switch {
		case !inA:
			add("table %s: only on %s", name, bName)
			continue
		case !inB:
			add("table %s: only on %s", name, aName)
			continue
		}
		for _, col := range union(ta.Columns, tb.Columns) {
			ca, inA := ta.Columns[col]
			cb, inB := tb.Columns[col]
			switch {
			case !inA:
				add("table %s: column %s only on %s", name, col, bName)
			case !inB:
				add("table %s: column %s only on %s", name, col, aName)
			case ca.Family != cb.Family:
				add("table %s: column %s is %s on %s, %s on %s", name, col, ca.Family, aName, cb.Family, bName)
			case ca.NotNull != cb.NotNull:
				add("table %s: column %s is NOT NULL on %s only", name, col, map[bool]string{true: aName, false: bName}[ca.NotNull])
			}
		}
		if !slices.Equal(ta.PrimaryKey, tb.PrimaryKey) {
			add("table %s: primary key (%s) on %s, (%s) on %s", name,
				strings.Join(ta.PrimaryKey, ", "), aName, strings.Join(tb.PrimaryKey, ", "), bName)
		}
		for _, u := range ta.Unique {
			if !slices.Contains(tb.Unique, u) {
				add("table %s: unique key %s only on %s", name, u, aName)
			}
		}
		for _, u := range tb.Unique {
			if !slices.Contains(ta.Unique, u) {
				add("table %s: unique key %s only on %s", name, u, bName)
			}
		}
		for _, ix := range union(ta.Indexes, tb.Indexes) {
			ia, inA := ta.Indexes[ix]
			ib, inB := tb.Indexes[ix]
			switch {
			case !inA:
				add("table %s: index %s %s only on %s", name, ix, ib, bName)
			case !inB:
				add("table %s: index %s %s only on %s", name, ix, ia, aName)
			case ia.String() != ib.String():
				add("table %s: index %s is %s on %s, %s on %s", name, ix, ia, aName, ib, bName)
			}
		}
	}
	sort.Strings(out)
	return out
}

func union[V any](a, b map[string]V) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func strings1(ctx context.Context, db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			_ = rows.Close()
			return nil, err
		}
		out = append(out, s)
	}
	return out, closeRows(rows)
}

func closeRows(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return err
	}
	return rows.Close()
}
