package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Sessions live in memory: a restart logs every browser out, and the
// console of one process does not know another's sessions (there is one
// admin port per process). A session is found by the SHA-256 of its id, so
// the map holds no usable cookie value.

// The cookies the console sets. Both are HttpOnly, SameSite=Strict and
// scoped to /console.
const (
	sessionCookie = "apistack_console"
	// loginCookie carries the login form's CSRF token (double submit):
	// there is no session yet to hold it.
	loginCookie = "apistack_console_login"
)

type session struct {
	csrf    string
	expires time.Time
}

type sessions struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	byID map[[32]byte]*session
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, byID: map[[32]byte]*session{}}
}

// randomToken returns 32 random bytes, base64url-encoded.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session and returns its id (the cookie's value).
func (s *sessions) create() (id string, sess *session) {
	id = randomToken()
	sess = &session{csrf: randomToken(), expires: s.now().Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, v := range s.byID { // drop expired sessions as new ones come
		if now.After(v.expires) {
			delete(s.byID, k)
		}
	}
	s.byID[sha256.Sum256([]byte(id))] = sess
	return id, sess
}

// get returns the live session of r's cookie, or nil.
func (s *sessions) get(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	key := sha256.Sum256([]byte(c.Value))
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.byID[key]
	if sess == nil {
		return nil
	}
	if s.now().After(sess.expires) {
		delete(s.byID, key)
		return nil
	}
	return sess
}

// end deletes r's session.
func (s *sessions) end(r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.mu.Lock()
		delete(s.byID, sha256.Sum256([]byte(c.Value)))
		s.mu.Unlock()
	}
}

// equal compares two secrets in constant time (of their hashes, so their
// lengths leak nothing either).
func equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1 && a != "" && b != ""
}

func setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/console", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: false,
	})
}
