package storage

import (
	"bytes"
	"context"
	"crypto/hmac"
	"io"
	"time"
)

// Operator is the operator's side of a storage server, beside its API: the
// calls the admin API, the demo seed and the test kit make (buckets, their
// versioning and the access keys that sign requests). They bypass
// signatures: the admin API guards them with its own token. Server.Operator
// gives a server's.
type Operator Server

// Operator is the operator's side of s.
func (s *Server) Operator() *Operator { return (*Operator)(s) }

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
// storeerr.ErrAlreadyExists when the name is taken (bucket names are global, whatever
// their account, as in object storage).
func (s *Operator) CreateBucket(ctx context.Context, account, name string, v Versioning) (Bucket, error) {
	if account == "" {
		account = DefaultAccount
	}
	return s.store.createBucket(ctx, account, name, v, s.clock.Now())
}

// Bucket returns the named bucket; storeerr.ErrNotFound when there is none.
func (s *Operator) Bucket(ctx context.Context, name string) (Bucket, error) {
	return s.store.bucket(ctx, name)
}

// Buckets lists the buckets by name.
func (s *Operator) Buckets(ctx context.Context) ([]Bucket, error) {
	return s.store.buckets(ctx)
}

// SetVersioning enables or suspends a bucket's versioning; storeerr.ErrNotFound for no
// such bucket, storeerr.ErrConflict for turning versioning off once it was on.
func (s *Operator) SetVersioning(ctx context.Context, name string, v Versioning) (Bucket, error) {
	return s.store.setVersioning(ctx, name, v)
}

// DeleteBucket deletes a bucket and its lifecycle configuration.
func (s *Operator) DeleteBucket(ctx context.Context, name string) error {
	return s.store.deleteBucket(ctx, name)
}

// CreateKey issues an access key of account ("" means DefaultAccount); the
// returned Secret is never shown again.
func (s *Operator) CreateKey(ctx context.Context, account, description string) (AccessKey, error) {
	if account == "" {
		account = DefaultAccount
	}
	return s.store.createKey(ctx, account, description, s.clock.Now())
}

// Keys lists the access keys, without their secrets.
func (s *Operator) Keys(ctx context.Context) ([]AccessKey, error) {
	return s.store.keys(ctx)
}

// DeleteKey deletes an access key; its signatures fail from then on.
func (s *Operator) DeleteKey(ctx context.Context, keyID string) error {
	return s.store.deleteKey(ctx, keyID)
}

// KeyWorks reports whether keyID exists with this secret and acts for account.
func (s *Operator) KeyWorks(ctx context.Context, account, keyID, secret string) bool {
	stored, found, err := s.store.keySecret(ctx, keyID)
	if err != nil || !found || !hmac.Equal([]byte(stored), []byte(secret)) {
		return false
	}
	keyAccount, err := s.store.keyAccount(ctx, keyID)
	return err == nil && keyAccount == account
}

// Region is the region requests must be signed for.
func (s *Operator) Region() string { return s.cfg.Region }

// Domain is the domain of virtual-host-style addresses.
func (s *Operator) Domain() string { return s.cfg.Domain }

// LifecycleCount returns how many buckets have a lifecycle configuration
// (tests watch it to see that refused requests store nothing).
func (s *Operator) LifecycleCount(ctx context.Context) (int, error) {
	return s.store.lifecycleCount(ctx)
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
