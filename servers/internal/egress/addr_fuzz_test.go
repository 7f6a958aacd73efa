package egress

import (
	"net/netip"
	"testing"
)

// FuzzHostAddr: any host is read without a panic; an IPv4 address read
// from any spelling reads back the same from its dotted form, and its
// decision is the dotted form's.
func FuzzHostAddr(f *testing.F) {
	for _, seed := range []string{"2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "127.1", "169.254.169.254.",
		"[::169.254.169.254]", "[64:ff9b:1::a9fe:a9fe]", "example.com", "1.2.3.4.5", "0x", "08", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, host string) {
		a, ok, err := HostAddr(host)
		if err != nil || !ok {
			return
		}
		if !a.Is4() {
			return
		}
		back, ok, err := HostAddr(a.String())
		if err != nil || !ok || back != a {
			t.Fatalf("%q reads as %s, which reads back as %s (%v, %v)", host, a, back, ok, err)
		}
		if Forbidden(a) != Forbidden(netip.MustParseAddr(a.String())) {
			t.Fatalf("%q: decided unlike %s", host, a)
		}
	})
}
