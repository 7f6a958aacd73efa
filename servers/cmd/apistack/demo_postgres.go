package main

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/apistack/apistack/servers/internal/dbopen"
	"github.com/apistack/apistack/servers/internal/masterkey"
	"github.com/apistack/apistack/servers/internal/secretbox"
)

//go:embed migrations/admin/*.sql
var adminMigrations embed.FS

// adminSchema is the admin schema of a PostgreSQL stack: the demo
// credentials every replica reads (PostgreSQL only; a SQLite stack keeps
// them in demo-credentials.json).
func adminSchema() dbopen.Schema {
	sub, err := fs.Sub(adminMigrations, "migrations/admin")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return dbopen.Schema{Name: "admin", Postgres: sub}
}

// demoCredentialsLabel binds the sealed credentials to their row.
const demoCredentialsLabel = "admin.demo_credentials.1"

// bootstrapSharedDemo runs bootstrap once at a time across every replica of a
// PostgreSQL stack, under a session advisory lock: the first replica creates
// the demo tenants and stores their credentials (sealed with the admin key
// derived from the master key); the next ones find them, check they still
// work (bootstrapDemo keeps what works) and end with the same. It returns
// the credentials and what was stored before.
func bootstrapSharedDemo(ctx context.Context, target dbopen.Target, key masterkey.Key, bootstrap func(previous demoCredentials) (demoCredentials, error)) (creds, previous demoCredentials, err error) {
	adminKey, err := key.Derive("admin")
	if err != nil {
		return creds, previous, err
	}
	box, err := secretbox.New(adminKey)
	if err != nil {
		return creds, previous, err
	}
	db, err := dbopen.Open(ctx, target, adminSchema())
	if err != nil {
		return creds, previous, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return creds, previous, fmt.Errorf("admin database: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext('apistack: demo bootstrap'))`); err != nil {
		return creds, previous, fmt.Errorf("demo bootstrap lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('apistack: demo bootstrap'))`)
	}()

	var sealed string
	switch err := conn.QueryRowContext(ctx, `SELECT sealed FROM demo_credentials WHERE id = 1`).Scan(&sealed); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return creds, previous, fmt.Errorf("read the demo credentials: %w", err)
	default:
		data, err := box.Open(demoCredentialsLabel, sealed)
		if err != nil {
			return creds, previous, fmt.Errorf("the stored demo credentials do not open with this master key (every replica needs the same): %w", err)
		}
		if err := json.Unmarshal(data, &previous); err != nil {
			return creds, previous, fmt.Errorf("read the demo credentials: %w", err)
		}
	}
	if creds, err = bootstrap(previous); err != nil {
		return creds, previous, err
	}
	data, err := json.Marshal(creds)
	if err != nil {
		return creds, previous, err
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO demo_credentials (id, sealed, updated_at) VALUES (1, $1, now())
		ON CONFLICT (id) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
		box.Seal(demoCredentialsLabel, data)); err != nil {
		return creds, previous, fmt.Errorf("store the demo credentials: %w", err)
	}
	return creds, previous, nil
}
