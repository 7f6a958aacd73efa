package fax

import (
	"context"
	"time"
)

// The caches' bounds (API keys, applications): entries for those in use,
// each re-read from the database at least once a minute.
const (
	keyCacheSize = 10000
	keyCacheTTL  = time.Minute
)

// keyEntry is what an API key resolved to.
type keyEntry struct {
	accountID, accountName string
	stored                 []byte
}

// apiKey returns the account and stored hash of the key whose hash is hash,
// from the cache when it is there (storeerr.ErrNotFound when no key has it; unknown
// keys are not cached, so a key created later works at once).
func (s *Server) apiKey(ctx context.Context, hash []byte) (keyEntry, error) {
	return s.keys.Load(string(hash), func() (keyEntry, error) {
		acct, name, stored, err := s.store.keyByHash(ctx, hash)
		return keyEntry{accountID: acct, accountName: name, stored: stored}, err
	})
}

// application returns the account's application id (storeerr.ErrNotFound when it is
// missing or another account's), from the cache when it is there.
func (s *Server) application(ctx context.Context, accountID, id string) (application, error) {
	return s.apps.Load(accountID+"|"+id, func() (application, error) {
		return s.store.application(ctx, accountID, id)
	})
}
