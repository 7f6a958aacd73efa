package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublic(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"93.184.215.14", true}, {"8.8.8.8", true}, {"2606:4700::1111", true},
		{"127.0.0.1", false}, {"127.1.2.3", false}, {"::1", false}, {"::ffff:127.0.0.1", false},
		{"10.0.0.1", false}, {"172.16.5.4", false}, {"192.168.1.1", false}, {"fd00::1", false},
		{"169.254.169.254", false}, {"fe80::1", false}, {"0.0.0.0", false}, {"::", false},
		{"224.0.0.1", false}, {"ff02::1", false}, {"100.64.0.1", false}, {"255.255.255.255", false},
		{"192.0.2.1", false}, {"198.18.0.1", false}, {"240.0.0.1", false}, {"2001:db8::1", false},
		{"64:ff9b::7f00:1", false}, {"64:ff9b::808:808", true}, {"2002:7f00:1::", false}, {"2002:808:808::", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Public(netip.MustParseAddr(tt.addr)), tt.addr)
	}
}

// mapResolver resolves the names of a test to fixed addresses.
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// publicAt returns Options in which the name public.test resolves to a
// public address that is in fact the local server srv, and inside.test
// resolves to loopback.
func publicAt(t *testing.T, srv *httptest.Server) Options {
	t.Helper()
	local := srv.Listener.Addr().String()
	public := netip.MustParseAddr("93.184.215.14")
	var d net.Dialer
	return Options{
		Resolver: mapResolver{"public.test": {public}, "inside.test": {netip.MustParseAddr("127.0.0.1")}},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			ap := netip.MustParseAddrPort(address)
			if ap.Addr() == public {
				return d.DialContext(ctx, network, local) // never off the machine
			}
			return d.DialContext(ctx, network, address)
		},
	}
}

func client(t *testing.T, opts Options) (*http.Client, *Policy) {
	t.Helper()
	p, err := New(opts)
	require.NoError(t, err)
	return &http.Client{Transport: p.Transport(http.DefaultTransport.(*http.Transport)), CheckRedirect: CheckRedirect}, p
}

func get(c *http.Client, u string) (int, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func TestTransport_RefusesLoopbackUnlessPrivateDestinationsAreAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)

	c, _ := client(t, Options{})
	_, err := get(c, srv.URL+"/doc.pdf")
	assert.ErrorIs(t, err, ErrRefused)

	c, _ = client(t, Options{AllowPrivate: true})
	code, err := get(c, srv.URL+"/doc.pdf")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
}

func TestTransport_AnAllowedURLIsReachableButNotTheRestOfItsHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	c, p := client(t, Options{})
	require.NoError(t, p.Allow(srv.URL+"/fax/sample.pdf"))

	code, err := get(c, srv.URL+"/fax/sample.pdf?x=1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	// Same host and port, another path: refused even with an idle
	// connection to the host in the pool.
	_, err = get(c, srv.URL+"/pam/teams/demo")
	assert.ErrorIs(t, err, ErrRefused)
	_, err = get(c, "http://localhost:"+srv.URL[len("http://127.0.0.1:"):]+"/fax/sample.pdf")
	assert.ErrorIs(t, err, ErrRefused, "another name of the host is another URL")
}

func TestTransport_ChecksEveryRedirectHopAfterResolution(t *testing.T) {
	var inner *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/to-loopback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/secret", http.StatusFound)
	})
	mux.HandleFunc("/to-inside-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://inside.test:"+inner.URL[len("http://127.0.0.1:"):]+"/secret", http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/to-public", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://public.test/ok", http.StatusFound)
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) {})
	outer := httptest.NewServer(mux)
	t.Cleanup(outer.Close)
	var reached atomic.Int32
	inner = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached.Add(1) }))
	t.Cleanup(inner.Close)

	c, _ := client(t, publicAt(t, outer))
	code, err := get(c, "http://public.test/to-public")
	require.NoError(t, err, "a public host is reached, redirects included")
	assert.Equal(t, http.StatusOK, code)
	for _, path := range []string{"/to-loopback", "/to-inside-name", "/to-file"} {
		_, err := get(c, "http://public.test"+path)
		assert.ErrorIs(t, err, ErrRefused, path)
	}
	assert.Zero(t, reached.Load(), "nothing reached the loopback server")
	_, err = get(c, "http://inside.test/")
	assert.ErrorIs(t, err, ErrRefused, "a name resolving to loopback is refused after resolution")
}

func TestDialer_TheControlHookRefusesANonPublicSocketAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	p, err := New(Options{})
	require.NoError(t, err)
	// Straight to the dialer, past the resolution check.
	_, err = p.dial(context.Background(), "tcp", srv.Listener.Addr().String())
	assert.True(t, errors.Is(err, ErrRefused), "got %v", err)
}

func TestAllow_RefusesWhatIsNotAnHTTPURL(t *testing.T) {
	_, err := New(Options{Allow: []string{"ftp://127.0.0.1/x"}})
	assert.Error(t, err)
}

func TestForbidden(t *testing.T) {
	for addr, want := range map[string]bool{
		"169.254.169.254": true, "169.254.0.1": true, "fe80::1": true, "fd00:ec2::254": true,
		"100.100.100.200": true, "192.0.0.192": true, "0.0.0.0": true, "0.1.2.3": true, "::": true,
		"::ffff:169.254.169.254": true, "64:ff9b::a9fe:a9fe": true, "224.0.0.1": true,
		"127.0.0.1": false, "::1": false, "10.0.0.1": false, "192.168.1.1": false, "100.64.0.1": false,
		"fd00::1": false, "8.8.8.8": false,
	} {
		assert.Equal(t, want, Forbidden(netip.MustParseAddr(addr)), addr)
	}
}

// metadataAt returns Options in which metadata.test resolves to the cloud
// metadata address but is in fact the local server srv: a dial that got
// that far reached it.
func metadataAt(srv *httptest.Server, opts Options) Options {
	local := srv.Listener.Addr().String()
	var d net.Dialer
	opts.Resolver = mapResolver{"metadata.test": {netip.MustParseAddr("169.254.169.254")}, "private.test": {netip.MustParseAddr("10.1.2.3")}}
	opts.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		if netip.MustParseAddrPort(address).Addr().Unmap() == netip.MustParseAddr("169.254.169.254") {
			return d.DialContext(ctx, network, local)
		}
		return d.DialContext(ctx, network, address)
	}
	return opts
}

func TestTransport_MetadataIsRefusedWhateverTheOptionsOnEveryHop(t *testing.T) {
	var reached atomic.Int32
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached.Add(1) }))
	t.Cleanup(meta.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://metadata.test/latest/meta-data/", http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	_, port, _ := net.SplitHostPort(redirector.Listener.Addr().String())
	for name, opts := range map[string]Options{
		"default":       {},
		"loopback":      {AllowLoopback: true},
		"private":       {AllowPrivate: true},
		"allowed hosts": {AllowPrivate: true, AllowHosts: []string{"metadata.test:80", "127.0.0.1:" + port}},
	} {
		t.Run(name, func(t *testing.T) {
			c, p := client(t, metadataAt(meta, opts))
			_, err := get(c, "http://metadata.test/latest/meta-data/")
			var re *RefusedError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, ReasonForbidden, re.Reason)
			if opts.AllowLoopback || opts.AllowPrivate {
				_, err = get(c, redirector.URL+"/")
				assert.ErrorIs(t, err, ErrRefused, "a redirect to the metadata address")
			}
			assert.ErrorIs(t, p.Check(context.Background(), "http://169.254.169.254/"), ErrRefused)
			assert.ErrorIs(t, p.Check(context.Background(), "http://metadata.test/"), ErrRefused)
		})
	}
	assert.Zero(t, reached.Load(), "the metadata address was never dialled")
	_, err := New(Options{AllowHosts: []string{"169.254.169.254:80"}})
	assert.Error(t, err, "a metadata address cannot be allowed by name")
}

func TestTransport_LoopbackWhenAllowedButNotPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	c, p := client(t, metadataAt(srv, Options{AllowLoopback: true}))
	code, err := get(c, srv.URL+"/hook")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	require.NoError(t, p.Check(context.Background(), srv.URL+"/hook"))
	require.NoError(t, p.Check(context.Background(), "http://localhost:9/hook"))
	var re *RefusedError
	require.ErrorAs(t, p.Check(context.Background(), "http://10.0.0.1/hook"), &re)
	assert.Equal(t, ReasonPrivate, re.Reason)
	require.ErrorAs(t, p.Check(context.Background(), "http://private.test/hook"), &re)
	assert.NoError(t, p.Check(context.Background(), "http://unresolvable.test/hook"), "a name that does not resolve now may later")
	assert.ErrorIs(t, p.Check(context.Background(), "ftp://example.com/x"), ErrRefused)

	// Without loopback, the loopback URL is refused, naming the reason.
	c, p = client(t, Options{})
	_, err = get(c, srv.URL+"/hook")
	require.ErrorAs(t, err, &re)
	assert.Equal(t, ReasonLoopback, re.Reason)
	require.ErrorAs(t, p.Check(context.Background(), srv.URL+"/hook"), &re)
	assert.Equal(t, ReasonLoopback, re.Reason)
}

func TestTransport_AnAllowedHostIsReachableOnItsPortOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(other.Close)
	c, p := client(t, Options{AllowHosts: []string{srv.Listener.Addr().String()}})
	code, err := get(c, srv.URL+"/any/path")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	require.NoError(t, p.Check(context.Background(), srv.URL+"/x"))
	_, err = get(c, other.URL+"/")
	assert.ErrorIs(t, err, ErrRefused, "another port of the host")
	assert.ErrorIs(t, p.Check(context.Background(), other.URL+"/"), ErrRefused)
	_, err = New(Options{AllowHosts: []string{"no-port"}})
	assert.Error(t, err)
}

func TestTransport_AnAllowedPrefixOpensTheURLsBelowItOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	c, p := client(t, Options{})
	require.NoError(t, p.AllowPrefix(srv.URL+"/sandboxes/"))
	for _, path := range []string{"/sandboxes/sbx-1/inbox", "/sandboxes/sbx-2/inbox?x=1"} {
		code, err := get(c, srv.URL+path)
		require.NoError(t, err, path)
		assert.Equal(t, http.StatusOK, code, path)
		assert.NoError(t, p.Check(context.Background(), srv.URL+path), path)
	}
	for _, path := range []string{"/sandboxes", "/pam/teams/demo", "/sandboxes/../pam/teams", "/sandboxes/./x", "/sandboxesx/y"} {
		_, err := get(c, srv.URL+path)
		assert.ErrorIs(t, err, ErrRefused, path)
	}
	assert.Error(t, p.AllowPrefix(srv.URL+"/no-slash"))
	assert.Error(t, p.AllowPrefix("ftp://127.0.0.1/x/"))
}
