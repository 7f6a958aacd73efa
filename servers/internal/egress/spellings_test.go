package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/egress/egresstest"
)

func TestHostAddr_ReadsEveryIPv4SpellingWithoutALookup(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"2852039166", "169.254.169.254"}, {"0xa9fea9fe", "169.254.169.254"}, {"0XA9FEA9FE", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"}, {"169.254.43518", "169.254.169.254"}, {"169.16689662", "169.254.169.254"},
		{"169.254.169.254.", "169.254.169.254"}, {"127.1", "127.0.0.1"}, {"0x7f.1", "127.0.0.1"}, {"0", "0.0.0.0"},
		{"0x", "0.0.0.0"}, {"[::1]", "::1"}, {"[fe80::1%eth0]", "fe80::1%eth0"}, {"8.8.8.8", "8.8.8.8"},
	} {
		a, ok, err := HostAddr(tc.host)
		require.NoError(t, err, tc.host)
		require.True(t, ok, tc.host)
		assert.Equal(t, tc.want, a.String(), tc.host)
	}
	for _, host := range []string{"example.com", "example.com.", "localhost", "1e1", "0x1g.example", "a.0x1g"} {
		_, ok, err := HostAddr(host)
		assert.NoError(t, err, host)
		assert.False(t, ok, "%s is a name", host)
	}
	for _, host := range []string{"1.2.3.4.5", "256.1.1.1", "1.2.3.256", "1.2.65536", "4294967296", "08", "0x1.0x100.1.1", "example.1"} {
		_, _, err := HostAddr(host)
		assert.Error(t, err, "%s spells no address and names no host", host)
	}
}

// noLookup is a resolver that fails the test: an address's spelling is
// decided without one.
type noLookup struct{ t *testing.T }

func (r noLookup) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.t.Errorf("%s was looked up", host)
	return nil, errors.New("no lookup expected")
}

// refusedIn reports whether the policy of opts refuses kind.
func refusedIn(opts Options, kind egresstest.Kind) bool {
	switch kind {
	case egresstest.Metadata:
		return true
	case egresstest.Loopback:
		return !opts.AllowLoopback && !opts.AllowPrivate
	}
	return !opts.AllowPrivate
}

var policyModes = map[string]Options{
	"public only":   {},
	"loopback":      {AllowLoopback: true},
	"every private": {AllowPrivate: true},
}

// TestPolicy_DecidesEverySpellingAsTheAddressItSpells checks every spelling
// of a refused address in every mode, where a URL is set (Check) and where
// it is used (the transport's dial), without a lookup.
func TestPolicy_DecidesEverySpellingAsTheAddressItSpells(t *testing.T) {
	for mode, opts := range policyModes {
		t.Run(mode, func(t *testing.T) {
			opts.Resolver = noLookup{t}
			var dialled []string
			opts.Dial = func(_ context.Context, _, address string) (net.Conn, error) {
				dialled = append(dialled, address)
				return nil, errors.New("dialled")
			}
			p, err := New(opts)
			require.NoError(t, err)
			c := &http.Client{Transport: p.Transport(http.DefaultTransport.(*http.Transport))}
			for _, s := range egresstest.Spellings {
				refused := refusedIn(opts, s.Kind)
				err := p.Check(context.Background(), s.URL())
				if refused {
					require.ErrorIs(t, err, ErrRefused, "%s: %s is set", s.Name, s.URL())
					var re *RefusedError
					if errors.As(err, &re) && s.Kind == egresstest.Metadata {
						assert.Equal(t, ReasonForbidden, re.Reason, s.Name)
					}
				} else {
					assert.NoError(t, err, "%s: %s is set", s.Name, s.URL())
				}
				dialled = nil
				_, err = c.Get(s.URL())
				require.Error(t, err)
				if refused {
					assert.ErrorIs(t, err, ErrRefused, "%s: %s is used", s.Name, s.URL())
					assert.Empty(t, dialled, "%s: %s is used", s.Name, s.URL())
				} else {
					assert.Len(t, dialled, 1, "%s: %s is used", s.Name, s.URL())
				}
			}
		})
	}
}

// TestDialer_TheControlHookDecidesEveryIPv6FormAsItsIPv4Address: the last
// check, on the socket's address, sees through the forms that carry an
// IPv4 address.
func TestDialer_TheControlHookDecidesEveryIPv6FormAsItsIPv4Address(t *testing.T) {
	for mode, opts := range policyModes {
		p, err := New(opts)
		require.NoError(t, err)
		for _, s := range egresstest.Spellings {
			a, ok, err := HostAddr(s.Host)
			require.NoError(t, err, s.Name)
			require.True(t, ok, s.Name)
			err = p.control(context.Background(), "tcp6", netip.AddrPortFrom(a, 80).String(), nil)
			if refusedIn(opts, s.Kind) {
				assert.ErrorIs(t, err, ErrRefused, "%s: %s: %s", mode, s.Name, a)
			} else {
				assert.NoError(t, err, "%s: %s: %s", mode, s.Name, a)
			}
		}
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"::ffff:169.254.169.254": "169.254.169.254", "::169.254.169.254": "169.254.169.254",
		"::ffff:0:10.0.0.5": "10.0.0.5", "64:ff9b::8.8.8.8": "8.8.8.8", "::1": "::1", "::": "::",
		"2606:4700::1111": "2606:4700::1111", "fe80::1%eth0": "fe80::1",
	} {
		assert.Equal(t, want, Canonical(netip.MustParseAddr(in)).String(), in)
	}
	assert.True(t, Public(netip.MustParseAddr("::8.8.8.8")), "a public address's compatible form is public")
	assert.False(t, Public(netip.MustParseAddr("2001:0:4136:e378:8000:63bf:3fff:fdd2")), "Teredo is not public")
	assert.True(t, Forbidden(netip.MustParseAddr("2001:0:a9fe:a9fe::1")), "a Teredo server at the metadata address")
}
