// Package apistore holds the store code the API servers share: the server
// secrets kept in an API's settings table, the page-token codec keyed by
// one, the reading of a query's rows and the running of a transaction's
// statements one after another.
package apistore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/pagetoken"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// SecretSize is the size in bytes of the secrets Secret makes.
const SecretSize = 32

// Secret returns the named server secret of the API's settings table
// (name, value), creating it (SecretSize random bytes) at first use, so that
// it survives restarts; replicas of one database all read the first one
// written.
func Secret(ctx context.Context, db *sqldb.DB, name string) ([]byte, error) {
	var key []byte
	err := db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&key)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read setting %s: %w", name, err)
	}
	key = make([]byte, SecretSize)
	_, _ = rand.Read(key)
	if _, err := db.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, key); err != nil {
		return nil, fmt.Errorf("store setting %s: %w", name, err)
	}
	return Secret(ctx, db, name)
}

// Cursors returns the codec of the API's page tokens, keyed by its
// cursor_key secret (Secret): a token stays valid across restarts and
// replicas.
func Cursors(ctx context.Context, db *sqldb.DB) (*pagetoken.Codec, error) {
	key, err := Secret(ctx, db, "cursor_key")
	if err != nil {
		return nil, err
	}
	return pagetoken.New(key)
}

// PageCache returns a cache of what db's reads give (list pages, rendered
// answers), dropped after every commit of this replica (OnCommit) and after
// every commit another replica makes (Follow), and bypassed while this
// replica cannot hear those.
func PageCache[T any](db *sqldb.DB, size int, ttl time.Duration) *cache.Cache[T] {
	c := cache.New[T](size, ttl)
	db.OnCommit(c.Invalidate)
	db.Follow(c)
	return c
}

// Querier runs a query: a *sqldb.DB or a *sqldb.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Collect runs query and returns its rows, each read by scan into a T.
func Collect[T any](ctx context.Context, q Querier, scan func(rows *sql.Rows, v *T) error, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Scan reads a row of one column into v (Collect's scan of such a query).
func Scan[T any](rows *sql.Rows, v *T) error { return rows.Scan(v) }

// Counts runs a query of (name, count) rows and returns the counts by name.
func Counts(ctx context.Context, q Querier, query string, args ...any) (map[string]int, error) {
	type count struct {
		name string
		n    int
	}
	rows, err := Collect(ctx, q, func(rows *sql.Rows, c *count) error { return rows.Scan(&c.name, &c.n) }, query, args...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, c := range rows {
		out[c.name] = c.n
	}
	return out, nil
}

// Step is one statement of a script of statements (Run).
type Step struct {
	Query string
	Args  []any
}

// Run runs steps in order on tx, stopping at the first that fails.
func Run(ctx context.Context, tx sqldb.Execer, steps ...Step) error {
	for _, st := range steps {
		if _, err := tx.ExecContext(ctx, st.Query, st.Args...); err != nil {
			return err
		}
	}
	return nil
}
