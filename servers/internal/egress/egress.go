// Package egress is the destination policy of a server's outbound requests
// to URLs its tenants choose (documents to download, webhooks to call): by
// default they may reach public addresses only, never loopback, private,
// link-local or other special ranges, so a tenant cannot use the server to
// reach what sits beside it. Options open it by degrees: loopback (a stack
// whose every port is on loopback, where the tenants are the developer),
// named destinations (host:port), or every private address. Link-local
// addresses and the cloud providers' metadata services (Forbidden) stay
// refused whatever the options, on every redirect hop.
//
// The policy is checked where it cannot be fooled: on the address actually
// connected to, after name resolution, for every request, so for every
// redirect hop (a net.Dialer Control hook checks it once more on the
// socket). A few exact URLs can be allowed on a non-public address (a demo's
// own loopback receiver), without opening the rest of that host.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrRefused is wrapped by the error of a request to a destination the
// policy refuses.
var ErrRefused = errors.New("destination refused by the egress policy")

// Resolver resolves host names; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Policy.
type Options struct {
	// AllowPrivate lets requests reach every address but the Forbidden
	// ones, non-public ones included (tests on loopback, a deployment on a
	// private network).
	AllowPrivate bool `flag:"fax-allow-private-destinations" help:"let media_url and webhook URLs reach loopback, private and other non-public addresses, never link-local or cloud-metadata ones (default: public only, plus loopback when every port is on loopback and there is no --database, plus the admin port's demo sample and inbox)"`
	// AllowLoopback lets requests reach loopback addresses (127.0.0.0/8,
	// ::1): a stack running on a developer's machine, calling the
	// developer's own services.
	AllowLoopback bool
	// AllowHosts are destinations, "host:port", that may be reached on any
	// address but the Forbidden ones: a named service on a private network.
	// The host is compared as written in the URL (a name or an address).
	AllowHosts []string
	// Allow lists URLs that may be reached even on a non-public address:
	// exactly their scheme, host, port and path (any query).
	Allow []string
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address the policy has checked (an IP address
	// and port); nil means a net.Dialer whose Control hook checks the
	// address once more. Tests use it to reach a local server posing at a
	// public address.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Policy decides which destinations outbound requests may reach. It is safe
// for concurrent use.
type Policy struct {
	allowPrivate  bool
	allowLoopback bool
	allowHosts    map[string]bool // host:port, lower case
	resolver      Resolver
	dial          func(ctx context.Context, network, address string) (net.Conn, error)

	mu    sync.RWMutex
	allow map[string]bool // scheme://host:port/path
	hosts map[string]bool // host:port of the allowed URLs
	// prefixes are the allowed URL prefixes (AllowPrefix), as allowKey
	// writes them.
	prefixes []string
}

// New returns the policy opts describe.
func New(opts Options) (*Policy, error) {
	p := &Policy{allowPrivate: opts.AllowPrivate, allowLoopback: opts.AllowLoopback, resolver: opts.Resolver, dial: opts.Dial,
		allow: map[string]bool{}, hosts: map[string]bool{}, allowHosts: map[string]bool{}}
	for _, hp := range opts.AllowHosts {
		host, port, err := net.SplitHostPort(hp)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("egress: allowed destination %q is not host:port", hp)
		}
		if a, ok, _ := HostAddr(host); ok && Forbidden(a) {
			return nil, fmt.Errorf("egress: allowed destination %q is a link-local or metadata address, which is never reachable", hp)
		}
		p.allowHosts[net.JoinHostPort(strings.ToLower(host), port)] = true
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.dial == nil {
		d := &net.Dialer{ControlContext: p.control}
		p.dial = d.DialContext
	}
	if err := p.Allow(opts.Allow...); err != nil {
		return nil, err
	}
	return p, nil
}

// Allow adds URLs that may be reached even on a non-public address.
func (p *Policy) Allow(urls ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("egress: allowed URL %q is not an absolute http(s) URL", raw)
		}
		p.allow[allowKey(u)] = true
		p.hosts[hostPort(u)] = true
	}
	return nil
}

// AllowPrefix adds URL prefixes (scheme://host:port/path/): every URL
// whose path starts with one's, and holds no "." or ".." segment, may be
// reached as an allowed URL may (the sandboxes' inboxes on the admin port).
func (p *Policy) AllowPrefix(prefixes ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, raw := range prefixes {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(u.Path, "/") {
			return fmt.Errorf("egress: allowed URL prefix %q is not an absolute http(s) URL ending in /", raw)
		}
		p.prefixes = append(p.prefixes, allowKey(u))
		p.hosts[hostPort(u)] = true
	}
	return nil
}

// allowedLocked reports whether u is an allowed URL or under an allowed
// prefix; p.mu is held.
func (p *Policy) allowedLocked(u *url.URL) bool {
	key := allowKey(u)
	if p.allow[key] {
		return true
	}
	if len(p.prefixes) == 0 || path.Clean(u.EscapedPath()) != u.EscapedPath() {
		return false
	}
	for _, prefix := range p.prefixes {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return false
}

// Public reports whether a is a public unicast address: not loopback,
// private (RFC 1918, unique local), link-local, unspecified, multicast,
// shared (CGNAT), documentation, benchmarking, reserved, or an IPv6 form
// of one of those.
func Public(a netip.Addr) bool {
	a = Canonical(a)
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() ||
		a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	if anyContains(special, a) {
		return false
	}
	for _, v4 := range carriedIPv4s(a) {
		// A form that carries an IPv4 address: judge that address.
		if !Public(v4) {
			return false
		}
	}
	return true
}

// anyContains reports whether one of prefixes contains a.
func anyContains(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Forbidden reports whether a may never be reached whatever the policy's
// options: link-local addresses (169.254.0.0/16, fe80::/10, where the cloud
// providers' metadata services answer), the metadata services at other
// addresses (fd00:ec2::254, 100.100.100.200, 192.0.0.192), the unspecified
// address and 0.0.0.0/8 (which reach the local host), multicast, and every
// IPv6 form that carries one of those IPv4 addresses (Canonical,
// carriedIPv4s).
func Forbidden(a netip.Addr) bool {
	a = Canonical(a)
	if !a.IsValid() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return true
	}
	if anyContains(forbidden, a) {
		return true
	}
	for _, v4 := range carriedIPv4s(a) {
		if Forbidden(v4) {
			return true
		}
	}
	return false
}

var forbidden = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128", "100.100.100.200/32", "192.0.0.192/32", "255.255.255.255/32",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// permitted reports whether a may be reached by a request that no allowed
// URL or host exempts.
func (p *Policy) permitted(a netip.Addr) bool {
	a = Canonical(a)
	switch {
	case Forbidden(a):
		return false
	case Public(a), p.allowPrivate:
		return true
	case p.allowLoopback:
		return a.IsLoopback()
	}
	return false
}

// refusal is the error of an address the policy refuses.
func (p *Policy) refusal(a netip.Addr) error {
	a = Canonical(a)
	switch {
	case Forbidden(a):
		return &RefusedError{Addr: a, Reason: ReasonForbidden}
	case a.IsLoopback():
		return &RefusedError{Addr: a, Reason: ReasonLoopback}
	}
	return &RefusedError{Addr: a, Reason: ReasonPrivate}
}

// Reason says why an address is refused.
type Reason int

// The reasons an address is refused.
const (
	// ReasonForbidden is a link-local, metadata or other address never reachable.
	ReasonForbidden Reason = iota + 1
	// ReasonLoopback is a loopback address while loopback is not allowed.
	ReasonLoopback
	// ReasonPrivate is another non-public address (private, shared, special).
	ReasonPrivate
)

// RefusedError is the error of a destination the policy refuses; it wraps
// ErrRefused.
type RefusedError struct {
	// Addr is the address refused.
	Addr netip.Addr
	// Reason says why.
	Reason Reason
}

// Error describes the refusal.
func (e *RefusedError) Error() string {
	switch e.Reason {
	case ReasonForbidden:
		return fmt.Sprintf("egress: %s is a link-local or cloud-metadata address, never reachable: %v", e.Addr, ErrRefused)
	case ReasonLoopback:
		return fmt.Sprintf("egress: %s is a loopback address: %v", e.Addr, ErrRefused)
	}
	return fmt.Sprintf("egress: %s is not a public address: %v", e.Addr, ErrRefused)
}

// Unwrap returns ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	special   = func() []netip.Prefix {
		var out []netip.Prefix
		for _, s := range []string{
			"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
			"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
			"64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20", "5f00::/16",
		} {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}()
)

// Transport returns a RoundTripper enforcing the policy on every request
// it sends: base is cloned, its proxy removed (a proxy would connect on the
// policy's behalf) and its dialer replaced by the policy's.
func (p *Policy) Transport(base *http.Transport) http.RoundTripper {
	t := base.Clone()
	t.Proxy = nil
	t.DialContext = p.dialContext
	t.DialTLSContext = nil
	return &transport{p: p, next: t}
}

// CheckRedirect is an http.Client CheckRedirect that refuses a redirect to
// a scheme other than http and https, and more than 10 redirects. The
// destination of each hop is checked by the transport.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to a %q URL: %w", req.URL.Scheme, ErrRefused)
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

type transport struct {
	p    *Policy
	next http.RoundTripper
}

type allowedKey struct{}

// RoundTrip sends one request (one hop of a redirect chain). An allowed URL
// may dial its non-public host; any other URL on that host:port is refused
// here, as it could otherwise reuse the allowed URL's idle connection
// without a dial to check.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL
	if u.Scheme != "http" && u.Scheme != "https" {
		closeBody(req)
		return nil, fmt.Errorf("a %q URL: %w", u.Scheme, ErrRefused)
	}
	ctx := req.Context()
	if t.p.allowHosts[hostPort(u)] {
		ctx = context.WithValue(ctx, allowedKey{}, hostPort(u))
	} else if !t.p.allowPrivate {
		t.p.mu.RLock()
		exact, sameHost := t.p.allowedLocked(u), t.p.hosts[hostPort(u)]
		t.p.mu.RUnlock()
		switch {
		case exact:
			ctx = context.WithValue(ctx, allowedKey{}, hostPort(u))
		case sameHost && t.p.allowLoopback && literalLoopback(u.Hostname()):
			// Reachable without the exemption: its pooled connections
			// were dialled to loopback, which the policy permits.
		case sameHost:
			closeBody(req)
			return nil, fmt.Errorf("a URL of an allowed host other than the allowed ones: %w", ErrRefused)
		}
	}
	return t.next.RoundTrip(req.WithContext(ctx))
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

type checkedKey struct{}

// dialContext resolves address, dials the first permitted address it has,
// and refuses when it has none.
func (p *Policy) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	allowed, _ := ctx.Value(allowedKey{}).(string)
	exempt := allowed != "" && strings.EqualFold(allowed, address)
	var addrs []netip.Addr
	switch a, ok, err := HostAddr(host); {
	case err != nil:
		return nil, fmt.Errorf("egress: %w: %w", err, ErrRefused)
	case ok:
		addrs = []netip.Addr{a}
	default:
		addrs, err = p.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("egress: resolve: %w", err)
		}
	}
	err = fmt.Errorf("egress: %s resolves to no address: %w", host, ErrRefused)
	for _, a := range addrs {
		a = a.Unmap()
		if Forbidden(a) || !exempt && !p.permitted(a) {
			err = p.refusal(a)
			continue
		}
		conn, derr := p.dial(context.WithValue(ctx, checkedKey{}, exempt), network, net.JoinHostPort(a.String(), port))
		if derr == nil {
			return conn, nil
		}
		err = derr
	}
	return nil, err
}

// control checks the address a socket is about to connect to.
func (p *Policy) control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	a := ap.Addr()
	if exempt, _ := ctx.Value(checkedKey{}).(bool); Forbidden(a) || !exempt && !p.permitted(a) {
		return p.refusal(a)
	}
	return nil
}

// literalLoopback reports whether host is a loopback address written as
// such, or localhost (which the resolver may not send elsewhere).
func literalLoopback(host string) bool {
	host = strings.ToLower(host)
	if a, ok, _ := HostAddr(host); ok {
		return Canonical(a).IsLoopback()
	}
	return strings.TrimSuffix(host, ".") == "localhost"
}

func allowKey(u *url.URL) string {
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return u.Scheme + "://" + hostPort(u) + path
}

// hostPort is u's host and port as the transport dials it (the scheme's
// default port made explicit).
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Check reports whether a request to raw could ever pass the policy, for a
// URL a tenant sets before it is used: nil when it may (its host resolves
// to a permitted address, or cannot be resolved now), else why not: not an
// absolute http(s) URL, or every address of its host refused (a
// *RefusedError, wrapping ErrRefused). An allowed URL or host passes on any
// address but a Forbidden one.
func (p *Policy) Check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("not an absolute http or https URL: %w", ErrRefused)
	}
	hp := hostPort(u)
	p.mu.RLock()
	exempt := p.allowHosts[hp] || p.allowedLocked(u)
	p.mu.RUnlock()
	host := strings.ToLower(u.Hostname())
	name := strings.TrimSuffix(host, ".")
	var addrs []netip.Addr
	switch a, ok, err := HostAddr(host); {
	case err != nil:
		return fmt.Errorf("egress: %w: %w", err, ErrRefused)
	case ok:
		addrs = []netip.Addr{a}
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	default:
		ctx, cancel := context.WithTimeout(ctx, checkResolveTimeout)
		defer cancel()
		addrs, err = p.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			return nil // it may resolve when it is used
		}
	}
	var refused error
	for _, a := range addrs {
		a = a.Unmap()
		if Forbidden(a) || !exempt && !p.permitted(a) {
			if refused == nil {
				refused = p.refusal(a)
			}
			continue
		}
		return nil
	}
	return refused
}

// checkResolveTimeout bounds Check's resolution of a host name.
const checkResolveTimeout = 2 * time.Second
