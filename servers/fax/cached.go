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
	key := string(hash)
	if e, ok := s.keys.Get(key); ok {
		return e, nil
	}
	gen := s.keys.Generation()
	acct, name, stored, err := s.store.keyByHash(ctx, hash)
	if err != nil {
		return keyEntry{}, err
	}
	e := keyEntry{accountID: acct, accountName: name, stored: stored}
	s.keys.Put(gen, key, e)
	return e, nil
}

// application returns the account's application id (storeerr.ErrNotFound when it is
// missing or another account's), from the cache when it is there.
func (s *Server) application(ctx context.Context, accountID, id string) (application, error) {
	key := accountID + "|" + id
	if a, ok := s.apps.Get(key); ok {
		return a, nil
	}
	gen := s.apps.Generation()
	a, err := s.store.application(ctx, accountID, id)
	if err != nil {
		return application{}, err
	}
	s.apps.Put(gen, key, a)
	return a, nil
}
