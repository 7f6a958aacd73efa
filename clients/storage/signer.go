package storage

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/apistack/apistack/clients/internal/replay"
	"github.com/apistack/apistack/clients/storage/sigv4"
)

// Signer is an http.RoundTripper that signs every request it carries with a
// SigV4-style scheme: CLOUD4-HMAC-SHA256 by default, or any other Scheme (such
// as sigv4.AWS4) with the same code. It sets the date and payload-hash headers
// and Authorization, signing every header of the request but the ones proxies
// change (User-Agent, ...), and never modifies the caller's request.
type Signer struct {
	// Scheme gives the names; the zero value means sigv4.Cloud4.
	Scheme sigv4.Scheme
	// Credentials sign the requests.
	Credentials sigv4.Credentials
	// Region and Service make the credential scope.
	Region, Service string
	// Now tells the signing time; nil means time.Now.
	Now func() time.Time
	// Next carries the signed request; nil means http.DefaultTransport.
	Next http.RoundTripper
}

// RoundTrip signs a copy of req and sends it with Next.
func (s *Signer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := replay.ReadBody(req)
	if err != nil {
		return nil, fmt.Errorf("storage: reading the request body to sign it: %w", err)
	}
	r := replay.WithBody(req, body)
	header := r.Header.Clone()
	if len(body) > 0 {
		// net/http sends Content-Length from the request, not the header map; it
		// is signed as the seed's samples sign it.
		header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	scheme := s.Scheme
	if scheme == (sigv4.Scheme{}) {
		scheme = sigv4.Cloud4
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	signed := scheme.SignHeaders(sigv4.Request{
		Method:      r.Method,
		Host:        host,
		Path:        r.URL.Path,
		Query:       r.URL.Query(),
		Header:      header,
		PayloadHash: sigv4.HashHex(body),
	}, s.Credentials, s.Region, s.Service, now(), sigv4.Options{SignPayloadHash: true})
	for k, v := range signed.Header {
		r.Header[k] = v
	}
	next := s.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}
