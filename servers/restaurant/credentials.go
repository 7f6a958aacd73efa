package restaurant

import (
	"context"
	"time"
)

// The credential caches' bounds: entries for the tokens and grants in use,
// each re-read from the database at least once a minute.
//
// Nothing in this service revokes a token or a grant before it ends (tokens
// expire, grants are made with their client and never withdrawn), so only
// what was found is cached: a token or grant created later is seen at once,
// and an expired token is refused by its cached expiry.
const (
	credentialCacheSize = 10000
	credentialCacheTTL  = time.Minute
)

// pageCacheSize bounds the list pages kept since the last write (a page
// holds at most 300 entities).
const pageCacheSize = 64

// entityCacheSize bounds the single entities kept since the last write (a
// document is a few hundred bytes to a few kilobytes).
const entityCacheSize = 4096

// tokenEntry is what a bearer token resolved to.
type tokenEntry struct {
	clientID, clientName string
	expires              time.Time
}

// token returns the client of the token whose hash is hash and when the
// token expires, from the cache when it is there.
func (s *Server) token(ctx context.Context, hash []byte) (tokenEntry, error) {
	return s.tokens.Load(string(hash), func() (tokenEntry, error) {
		clientID, name, expires, err := s.store.tokenByHash(ctx, hash)
		return tokenEntry{clientID: clientID, clientName: name, expires: expires}, err
	})
}

// access reports whether the restaurant exists and whether the client was
// granted it; a grant, once found, is cached.
func (s *Server) access(ctx context.Context, clientID, restaurantGUID string) (exists, granted bool, err error) {
	key := clientID + "|" + restaurantGUID
	if _, ok := s.grants.Get(key); ok {
		return true, true, nil
	}
	gen := s.grants.Generation()
	exists, granted, err = s.store.access(ctx, clientID, restaurantGUID)
	if err == nil && granted {
		s.grants.Put(gen, key, struct{}{})
	}
	return exists, granted, err
}
