package fax

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/apistack/apistack/servers/internal/egress"
)

// Flags named by the destination refusals: the operator's ways to open a
// destination (apistack serve).
const (
	flagAllowDestination = "--fax-allow-destination"
	flagAllowPrivate     = "--fax-allow-private-destinations"
)

// destinationProblems checks the URLs a request sets (pointer -> URL, those
// present) against the destination policy, and returns a 422 item for each
// one that can never pass, naming its field and how the operator could
// open it. A URL that is not absolute http(s) is left to the caller's own
// check.
func (s *Server) destinationProblems(ctx context.Context, urls []fieldURL) []apiErrorItem {
	var problems []apiErrorItem
	for _, f := range urls {
		if f.url == nil || !httpURL(*f.url) {
			continue
		}
		err := s.destinations.Check(ctx, *f.url)
		if err == nil {
			continue
		}
		problems = append(problems, invalidField(f.pointer, refusalDetail(f.name, *f.url, err)))
	}
	return problems
}

// fieldURL is a URL a request sets, with its field's name and JSON pointer.
type fieldURL struct {
	name, pointer string
	url           *string
}

// refusalDetail says why the URL of field can never be reached, and what
// would open it.
func refusalDetail(field, raw string, err error) string {
	hostPort := raw
	if u, perr := url.Parse(raw); perr == nil {
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		hostPort = net.JoinHostPort(u.Hostname(), port)
	}
	var re *egress.RefusedError
	if !errors.As(err, &re) {
		return fmt.Sprintf("%s is refused by the destination policy: %v", field, err)
	}
	switch re.Reason {
	case egress.ReasonForbidden:
		return fmt.Sprintf("%s reaches %s, a link-local or cloud-metadata address: never reachable, whatever the server's settings", field, re.Addr)
	case egress.ReasonLoopback:
		return fmt.Sprintf("%s reaches %s, a loopback address: loopback destinations are allowed only when the whole stack is local "+
			"(every port on loopback, no --database); the operator can allow this one with %s %s", field, re.Addr, flagAllowDestination, hostPort)
	}
	return fmt.Sprintf("%s reaches %s, which is not a public address: the operator can allow this one with %s %s, "+
		"or every private address with %s", field, re.Addr, flagAllowDestination, hostPort, flagAllowPrivate)
}

// checkStored checks the URLs an operator call stores (field name -> URL,
// empty ones skipped) against the destination policy, as the public API's
// operations do: ErrInvalid, saying which URL and why, for one that is not
// an absolute http(s) URL or can never pass.
func (s *Server) checkStored(ctx context.Context, urls ...fieldURL) error {
	for _, f := range urls {
		if f.url == nil || *f.url == "" {
			continue
		}
		if !httpURL(*f.url) {
			return fmt.Errorf("%w: %s %q is not an absolute http(s) URL", ErrInvalid, f.name, *f.url)
		}
		if err := s.destinations.Check(ctx, *f.url); err != nil {
			return fmt.Errorf("%w: %s", ErrInvalid, refusalDetail(f.name, *f.url, err))
		}
	}
	return nil
}
