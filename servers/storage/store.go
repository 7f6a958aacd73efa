package storage

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/secretbox"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// migrationFiles are the schema migrations of both dialects (API.Files,
// servers/internal/migrationset).
//
//go:embed migrations
var migrationFiles embed.FS

// store is every SQL statement of the storage service.
type store struct {
	db *sqldb.DB
	// box seals access-key secrets at rest.
	box *secretbox.Box
	// revoked is called after a key is deleted: the server drops what it
	// cached about keys.
	revoked func()
}

func (s *store) createBucket(ctx context.Context, account, name string, v Versioning, now time.Time) (Bucket, error) {
	now = sqldb.Time(sqldb.Micros(now))
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO buckets (name, account, versioning, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		name, account, string(v), sqldb.Micros(now))
	if err != nil {
		return Bucket{}, fmt.Errorf("create bucket: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Bucket{}, fmt.Errorf("create bucket: %w", err)
	} else if n == 0 {
		return Bucket{}, fmt.Errorf("bucket %q: %w", name, storeerr.ErrAlreadyExists)
	}
	return Bucket{Name: name, Account: account, Versioning: v, CreatedAt: now}, nil
}

func (s *store) bucket(ctx context.Context, name string) (Bucket, error) {
	var b Bucket
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT name, account, versioning, created_at FROM buckets WHERE name = ?`, name).
		Scan(&b.Name, &b.Account, &v, sqldb.TimeInto(&b.CreatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return Bucket{}, fmt.Errorf("bucket %q: %w", name, storeerr.ErrNotFound)
	}
	if err != nil {
		return Bucket{}, fmt.Errorf("bucket %q: %w", name, err)
	}
	b.Versioning = Versioning(v)
	return b, nil
}

func (s *store) buckets(ctx context.Context) ([]Bucket, error) {
	out, err := apistore.Collect(ctx, s.db, func(rows *sql.Rows, b *Bucket) error {
		return rows.Scan(&b.Name, &b.Account, (*string)(&b.Versioning), sqldb.TimeInto(&b.CreatedAt))
	}, `SELECT name, account, versioning, created_at FROM buckets ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list buckets: %w", err)
	}
	return out, nil
}

func (s *store) setVersioning(ctx context.Context, name string, v Versioning) (Bucket, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Bucket{}, fmt.Errorf("set versioning: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// The change depends on the bucket's versioning: one at a time.
	if _, err := tx.LockRows(ctx, `SELECT name FROM buckets WHERE name = ?`, name); err != nil {
		return Bucket{}, fmt.Errorf("set versioning: %w", err)
	}
	var b Bucket
	var current string
	err = tx.QueryRowContext(ctx, `SELECT name, account, versioning, created_at FROM buckets WHERE name = ?`, name).
		Scan(&b.Name, &b.Account, &current, sqldb.TimeInto(&b.CreatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return Bucket{}, fmt.Errorf("bucket %q: %w", name, storeerr.ErrNotFound)
	}
	if err != nil {
		return Bucket{}, fmt.Errorf("set versioning: %w", err)
	}
	if v == Unversioned && Versioning(current) != Unversioned {
		return Bucket{}, fmt.Errorf("bucket %q: versioning, once enabled, can only be suspended: %w", name, storeerr.ErrConflict)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE buckets SET versioning = ? WHERE name = ?`, string(v), name); err != nil {
		return Bucket{}, fmt.Errorf("set versioning: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Bucket{}, fmt.Errorf("set versioning: %w", err)
	}
	b.Versioning = v
	return b, nil
}

func (s *store) deleteBucket(ctx context.Context, name string) error {
	return deleteOne(ctx, s.db, "bucket", `DELETE FROM buckets WHERE name = ?`, name)
}

// deleteOne runs a delete of one row of a kind by its key: the store's
// storeerr.ErrNotFound (naming the key) when there was none.
func deleteOne(ctx context.Context, db sqldb.Execer, kind, query, key string) error {
	err := sqldb.ExecOne(ctx, db, fmt.Errorf("%s %q: %w", kind, key, storeerr.ErrNotFound), query, key)
	if err != nil && !errors.Is(err, storeerr.ErrNotFound) {
		return fmt.Errorf("delete %s: %w", kind, err)
	}
	return err
}

// newKeyID returns a key id in the protocol's style: 20 uppercase letters and digits.
func newKeyID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "CK" + string(b[2:])
}

// newSecret returns a new access key's secret.
func newSecret() string { return rand.Text() + rand.Text()[:14] }

func (s *store) createKey(ctx context.Context, account, description string, now time.Time) (AccessKey, error) {
	k := AccessKey{KeyID: newKeyID(), Secret: newSecret(), Account: account, Description: description, CreatedAt: sqldb.Time(sqldb.Micros(now))}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO access_keys (key_id, secret, account, description, created_at) VALUES (?, ?, ?, ?, ?)`,
		k.KeyID, s.box.Seal(k.KeyID, []byte(k.Secret)), k.Account, k.Description, sqldb.Micros(k.CreatedAt))
	if err != nil {
		return AccessKey{}, fmt.Errorf("create key: %w", err)
	}
	return k, nil
}

func (s *store) keySecret(ctx context.Context, keyID string) (string, bool, error) {
	var sealed string
	err := s.db.QueryRowContext(ctx, `SELECT secret FROM access_keys WHERE key_id = ?`, keyID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look up key: %w", err)
	}
	secret, err := s.box.Open(keyID, sealed)
	if err != nil {
		return "", false, fmt.Errorf("look up key %s: %w", keyID, err)
	}
	return string(secret), true, nil
}

// keyAccount returns the account of an access key.
func (s *store) keyAccount(ctx context.Context, keyID string) (string, error) {
	var account string
	err := s.db.QueryRowContext(ctx, `SELECT account FROM access_keys WHERE key_id = ?`, keyID).Scan(&account)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("key %q: %w", keyID, storeerr.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("look up the account of key %s: %w", keyID, err)
	}
	return account, nil
}

func (s *store) keys(ctx context.Context) ([]AccessKey, error) {
	out, err := apistore.Collect(ctx, s.db, func(rows *sql.Rows, k *AccessKey) error {
		return rows.Scan(&k.KeyID, &k.Account, &k.Description, sqldb.TimeInto(&k.CreatedAt))
	}, `SELECT key_id, account, description, created_at FROM access_keys ORDER BY created_at, key_id`)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return out, nil
}

func (s *store) deleteKey(ctx context.Context, keyID string) error {
	if err := deleteOne(ctx, s.db, "key", `DELETE FROM access_keys WHERE key_id = ?`, keyID); err != nil {
		return err
	}
	if s.revoked != nil {
		s.revoked()
	}
	return nil
}

func (s *store) putLifecycle(ctx context.Context, bucket string, document []byte, now time.Time) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO lifecycle_configurations (bucket, document, updated_at) VALUES (?, ?, ?)
		 ON CONFLICT (bucket) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
		bucket, string(document), sqldb.Micros(now))
	if err != nil {
		return fmt.Errorf("store lifecycle configuration: %w", err)
	}
	return nil
}

func (s *store) lifecycle(ctx context.Context, bucket string) ([]byte, error) {
	var doc string
	err := s.db.QueryRowContext(ctx, `SELECT document FROM lifecycle_configurations WHERE bucket = ?`, bucket).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("lifecycle configuration of %q: %w", bucket, storeerr.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read lifecycle configuration: %w", err)
	}
	return []byte(doc), nil
}

func (s *store) deleteLifecycle(ctx context.Context, bucket string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM lifecycle_configurations WHERE bucket = ?`, bucket); err != nil {
		return fmt.Errorf("delete lifecycle configuration: %w", err)
	}
	return nil
}

func (s *store) lifecycleCount(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM lifecycle_configurations`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count lifecycle configurations: %w", err)
	}
	return n, nil
}
