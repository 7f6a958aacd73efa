package storage

import (
	"bytes"
	"context"
	"crypto/hmac"
	"io"
	"time"
)

// The operator's side of the storage service, used by the admin API and by
// `apistack serve --demo`: buckets, their versioning and the access keys that
// sign requests. These calls bypass signatures; the admin API guards them
// with its own token.

// Versioning is the versioning state of a bucket, as object storage has it:
// once enabled, versioning can be suspended but never turned off.
type Versioning string

// The versioning states.
const (
	Unversioned Versioning = "Unversioned"
	Enabled     Versioning = "Enabled"
	Suspended   Versioning = "Suspended"
)

// Versioned reports whether the bucket keeps (or has kept) noncurrent
// versions: its lifecycle rules use NoncurrentVersionExpiration, not Expiration.
func (v Versioning) Versioned() bool { return v != Unversioned }

// DefaultAccount is the account of buckets and keys made without naming one,
// and of every bucket and key made before accounts existed.
const DefaultAccount = "default"

// Bucket is a bucket.
type Bucket struct {
	Name string
	// Account owns the bucket: only its keys act on the bucket.
	Account    string
	Versioning Versioning
	CreatedAt  time.Time
}

// AccessKey is a key that signs requests. Secret is set only when the key is
// created.
type AccessKey struct {
	KeyID  string
	Secret string
	// Account is the account the key acts for.
	Account     string
	Description string
	CreatedAt   time.Time
}

// CreateBucket creates a bucket owned by account ("" means DefaultAccount);
// ErrAlreadyExists when the name is taken (bucket names are global, whatever
// their account, as in object storage).
func (s *Server) CreateBucket(ctx context.Context, account, name string, v Versioning) (Bucket, error) {
	if account == "" {
		account = DefaultAccount
	}
	return s.store.createBucket(ctx, account, name, v, s.clock.Now())
}

// Bucket returns the named bucket; ErrNotFound when there is none.
func (s *Server) Bucket(ctx context.Context, name string) (Bucket, error) {
	return s.store.bucket(ctx, name)
}

// Buckets lists the buckets by name.
func (s *Server) Buckets(ctx context.Context) ([]Bucket, error) {
	return s.store.buckets(ctx)
}

// SetVersioning enables or suspends a bucket's versioning; ErrNotFound for no
// such bucket, ErrConflict for turning versioning off once it was on.
func (s *Server) SetVersioning(ctx context.Context, name string, v Versioning) (Bucket, error) {
	return s.store.setVersioning(ctx, name, v)
}

// DeleteBucket deletes a bucket and its lifecycle configuration.
func (s *Server) DeleteBucket(ctx context.Context, name string) error {
	return s.store.deleteBucket(ctx, name)
}

// CreateKey issues an access key of account ("" means DefaultAccount); the
// returned Secret is never shown again.
func (s *Server) CreateKey(ctx context.Context, account, description string) (AccessKey, error) {
	if account == "" {
		account = DefaultAccount
	}
	return s.store.createKey(ctx, account, description, s.clock.Now())
}

// Keys lists the access keys, without their secrets.
func (s *Server) Keys(ctx context.Context) ([]AccessKey, error) {
	return s.store.keys(ctx)
}

// DeleteKey deletes an access key; its signatures fail from then on.
func (s *Server) DeleteKey(ctx context.Context, keyID string) error {
	return s.store.deleteKey(ctx, keyID)
}

// KeyWorks reports whether keyID exists with this secret and acts for account.
func (s *Server) KeyWorks(ctx context.Context, account, keyID, secret string) bool {
	stored, found, err := s.store.keySecret(ctx, keyID)
	if err != nil || !found || !hmac.Equal([]byte(stored), []byte(secret)) {
		return false
	}
	keyAccount, err := s.store.keyAccount(ctx, keyID)
	return err == nil && keyAccount == account
}

// LifecycleCount returns how many buckets have a lifecycle configuration
// (tests watch it to see that refused requests store nothing).
func (s *Server) LifecycleCount(ctx context.Context) (int, error) {
	return s.store.lifecycleCount(ctx)
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
