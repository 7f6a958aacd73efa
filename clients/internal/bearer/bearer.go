// Package bearer keeps a bearer token fresh for a client: a Source fetches
// one on first use, refreshes it shortly before it expires, and shares one
// fetch among every caller that needs a token at the same moment; a Transport
// puts the token on each request and, on a 401, fetches a new one and tries
// once more.
package bearer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/apistack/apistack/internal/replay"
)

// Token is a bearer token and the instant it stops working.
type Token struct {
	Value     string
	ExpiresAt time.Time
}

// FetchFunc obtains a new token (a login, a key exchange).
type FetchFunc func(ctx context.Context) (Token, error)

// Source hands out a valid token, fetching a new one when needed. It is safe
// for concurrent use.
type Source struct {
	fetch FetchFunc
	// Margin is how long before expiry a token is replaced (default 30s).
	margin time.Duration
	now    func() time.Time

	mu       sync.Mutex
	current  Token
	inflight *fetchCall
}

type fetchCall struct {
	done chan struct{}
	tok  Token
	err  error
}

// NewSource returns a Source that fetches with fetch.
func NewSource(fetch FetchFunc) *Source {
	return &Source{fetch: fetch, margin: 30 * time.Second, now: time.Now}
}

// SetClock replaces the clock the Source judges expiry by (tests).
func (s *Source) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Token returns a token that is not about to expire. Concurrent callers that
// find none wait for one shared fetch.
func (s *Source) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	if s.current.Value != "" && s.now().Add(s.margin).Before(s.current.ExpiresAt) {
		tok := s.current.Value
		s.mu.Unlock()
		return tok, nil
	}
	call := s.inflight
	if call == nil {
		call = &fetchCall{done: make(chan struct{})}
		s.inflight = call
		// The fetch is not bound to the first caller's context: others wait on
		// it too, and one caller giving up must not fail them all.
		go s.run(context.WithoutCancel(ctx), call)
	}
	s.mu.Unlock()
	select {
	case <-call.done:
		if call.err != nil {
			return "", call.err
		}
		return call.tok.Value, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (s *Source) run(ctx context.Context, call *fetchCall) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tok, err := s.fetch(ctx)
	if err == nil && tok.Value == "" {
		err = errors.New("bearer: fetched an empty token")
	}
	s.mu.Lock()
	if err == nil {
		s.current = tok
	}
	s.inflight = nil
	s.mu.Unlock()
	call.tok, call.err = tok, err
	close(call.done)
}

// Invalidate drops token if it is still the current one, so the next Token
// fetches anew. Callers that saw a 401 with token call it; a token already
// replaced by another caller's refresh is left alone.
func (s *Source) Invalidate(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current.Value == token {
		s.current = Token{}
	}
}

// Transport authenticates requests with tokens from Source.
type Transport struct {
	Source *Source
	// Next sends the request; nil means http.DefaultTransport.
	Next http.RoundTripper
}

// RoundTrip sets Authorization: Bearer and retries once with a fresh token
// when the server answers 401 (the token expired or was revoked early).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	body, err := replay.ReadBody(req)
	if err != nil {
		return nil, fmt.Errorf("bearer: read request body: %w", err)
	}
	tok, err := t.Source.Token(req.Context())
	if err != nil {
		return nil, fmt.Errorf("bearer: get token: %w", err)
	}
	resp, err := next.RoundTrip(withToken(req, tok, body))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	t.Source.Invalidate(tok)
	fresh, err := t.Source.Token(req.Context())
	if err != nil || fresh == tok {
		return resp, nil //nolint:nilerr // the 401 is the answer when no new token can be had
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return next.RoundTrip(withToken(req, fresh, body))
}

func withToken(req *http.Request, tok string, body []byte) *http.Request {
	r := replay.WithBody(req, body)
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}
