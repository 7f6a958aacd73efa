package sqlitedb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
)

// OpenMemory opens a new SQLite database that lives in memory only, private
// to the returned pool (SQLite's memdb VFS, shared by the pool's
// connections), and applies migrations. It is gone once the pool is closed:
// the test kit gives each test its own.
func OpenMemory(ctx context.Context, migrations fs.FS) (*sql.DB, error) {
	q := url.Values{}
	q.Set("vfs", "memdb")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	dsn := "file:/apistack-" + rand.Text() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open an in-memory database: %w", err)
	}
	// The database lives as long as one connection to it does: keep them all.
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open an in-memory database: %w", err), db.Close())
	}
	if err := Migrate(ctx, db, migrations); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}
