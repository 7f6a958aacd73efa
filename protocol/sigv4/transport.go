package sigv4

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/apistack/apistack/internal/replay"
)

// Transport is an http.RoundTripper that signs every request it carries with
// a SigV4-style scheme: CLOUD4-HMAC-SHA256 by default, or any other Scheme
// (such as AWS4) with the same code. It sets the date and payload-hash headers
// and Authorization, signing every header of the request but the ones proxies
// change (User-Agent, ...), and never modifies the caller's request.
type Transport struct {
	// Scheme gives the names; the zero value means Cloud4.
	Scheme Scheme
	// Credentials sign the requests.
	Credentials Credentials
	// Region and Service make the credential scope.
	Region, Service string
	// Now tells the signing time; nil means time.Now.
	Now func() time.Time
	// Next carries the signed request; nil means http.DefaultTransport.
	Next http.RoundTripper
}

// RoundTrip signs a copy of req and sends it with Next.
func (s *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := replay.ReadBody(req)
	if err != nil {
		return nil, fmt.Errorf("sigv4: reading the request body to sign it: %w", err)
	}
	r := replay.WithBody(req, body)
	header := r.Header.Clone()
	if len(body) > 0 {
		// net/http sends Content-Length from the request, not the header map; it
		// is signed as the seed's samples sign it.
		header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	scheme := s.Scheme
	if scheme == (Scheme{}) {
		scheme = Cloud4
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	signed := scheme.SignHeaders(Request{
		Method:      r.Method,
		Host:        host,
		Path:        r.URL.Path,
		Query:       r.URL.Query(),
		Header:      header,
		PayloadHash: HashHex(body),
	}, s.Credentials, s.Region, s.Service, now(), Options{SignPayloadHash: true})
	for k, v := range signed.Header {
		r.Header[k] = v
	}
	next := s.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}
