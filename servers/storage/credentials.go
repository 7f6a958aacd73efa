package storage

import (
	"context"
	"fmt"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"time"
)

// The access-key cache's bounds: entries for the keys in use, each re-read
// (and unsealed) from the database at least once a minute.
const (
	keyCacheSize = 10000
	keyCacheTTL  = time.Minute
)

// accessKey is what an access key id resolved to: its secret, unsealed, and
// its account.
type accessKey struct {
	secret  string
	account string
}

// key returns the access key keyID, from the cache when it is there; found
// is false when no key has that id (unknown ids are not cached, so a key
// created later works at once).
func (s *Server) key(ctx context.Context, keyID string) (k accessKey, found bool, err error) {
	if k, ok := s.keys.Get(keyID); ok {
		return k, true, nil
	}
	gen := s.keys.Generation()
	secret, found, err := s.store.keySecret(ctx, keyID)
	if err != nil || !found {
		return accessKey{}, false, err
	}
	account, err := s.store.keyAccount(ctx, keyID)
	if err != nil {
		return accessKey{}, false, err
	}
	k = accessKey{secret: secret, account: account}
	s.keys.Put(gen, keyID, k)
	return k, true, nil
}

// keySecret is the signature verifier's lookup of a secret.
func (s *Server) keySecret(ctx context.Context, keyID string) (string, bool, error) {
	k, found, err := s.key(ctx, keyID)
	return k.secret, found, err
}

// keyAccount returns the account of an access key; storeerr.ErrNotFound when it was
// deleted.
func (s *Server) keyAccount(ctx context.Context, keyID string) (string, error) {
	k, found, err := s.key(ctx, keyID)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("key %q: %w", keyID, storeerr.ErrNotFound)
	}
	return k.account, nil
}
