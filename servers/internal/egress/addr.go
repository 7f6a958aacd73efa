package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// errNotAnAddress: a host written as a number that spells no IPv4 address
// (a part too large, a bad digit, more than four parts).
var errNotAnAddress = errors.New("a numeric host that is no valid address")

// HostAddr is the address a URL's host spells, decided without any lookup
// the way browsers and C resolvers read it: an IPv6 literal (brackets and a
// zone allowed), a dotted IPv4 address, or one of IPv4's other spellings
// (inet_aton's and the WHATWG URL standard's): one to four parts, each
// decimal, octal (a leading 0) or hexadecimal (0x), the last filling the
// bytes left (2852039166, 0xa9fea9fe, 0251.0376.0251.0376, 127.1), with
// one trailing dot allowed. ok is false for a host name (to be resolved);
// err is set for a host whose last label is numeric but spells no address,
// which must be refused rather than looked up.
func HostAddr(host string) (addr netip.Addr, ok bool, err error) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true, nil
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return netip.Addr{}, false, nil
	}
	parts := strings.Split(host, ".")
	if !numericLabel(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, false, fmt.Errorf("%q: %w", host, errNotAnAddress)
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := ipv4Number(p)
		if err != nil {
			return netip.Addr{}, false, fmt.Errorf("%q: %w", host, errNotAnAddress)
		}
		nums[i] = n
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false, fmt.Errorf("%q: %w", host, errNotAnAddress)
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false, fmt.Errorf("%q: %w", host, errNotAnAddress)
		}
		v |= n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// numericLabel reports whether a host's label is a number as the URL
// standard sees it (then the host is an IPv4 address or invalid): decimal
// digits, or 0x followed by hexadecimal digits (none included).
func numericLabel(s string) bool {
	if s == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		for _, c := range rest {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ipv4Number parses one part of an IPv4 address: hexadecimal after 0x,
// octal after a leading 0, else decimal.
func ipv4Number(s string) (uint64, error) {
	base := 10
	switch l := strings.ToLower(s); {
	case strings.HasPrefix(l, "0x"):
		s, base = s[2:], 16
		if s == "" {
			return 0, nil
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	return strconv.ParseUint(s, base, 32)
}

// IPv6 prefixes whose addresses carry an IPv4 address in their last 32
// bits: IPv4-compatible (deprecated, ::/96), IPv4-translated (SIIT,
// ::ffff:0:0:0/96) and the well-known NAT64 prefix (64:ff9b::/96);
// IPv4-mapped (::ffff:0:0/96) is netip's Unmap.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	teredo         = netip.MustParsePrefix("2001::/32")
)

// Canonical is the address a is decided as: the IPv4 address an IPv6
// address of the IPv4-mapped, IPv4-compatible, IPv4-translated or NAT64
// (64:ff9b::/96) forms carries, else a itself (its zone dropped). The
// unspecified address and ::1 stay IPv6.
func Canonical(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if !a.Is6() || a == netip.IPv6Unspecified() || a == netip.IPv6Loopback() {
		return a
	}
	if ipv4Compatible.Contains(a) || ipv4Translated.Contains(a) || nat64.Contains(a) {
		b := a.As16()
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	return a
}

// carriedIPv4s are the IPv4 addresses an IPv6 address of the other forms
// that carry one may reach: 6to4 (2002::/16), Teredo (2001::/32: its
// server, and its client's address, inverted) and the local-use NAT64
// prefix 64:ff9b:1::/48 (the address may sit at any of the places RFC 6052
// defines for prefixes of 48 to 96 bits).
func carriedIPv4s(a netip.Addr) []netip.Addr {
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	v4 := func(p, q, r, s byte) netip.Addr { return netip.AddrFrom4([4]byte{p, q, r, s}) }
	switch {
	case sixToFour.Contains(a):
		return []netip.Addr{v4(b[2], b[3], b[4], b[5])}
	case teredo.Contains(a):
		return []netip.Addr{v4(b[4], b[5], b[6], b[7]), v4(^b[12], ^b[13], ^b[14], ^b[15])}
	case nat64Local.Contains(a):
		// RFC 6052 section 2.2: bits 64 to 71 (b[8]) are always skipped.
		return []netip.Addr{
			v4(b[6], b[7], b[9], b[10]),    // /48
			v4(b[7], b[9], b[10], b[11]),   // /56
			v4(b[9], b[10], b[11], b[12]),  // /64
			v4(b[10], b[11], b[12], b[13]), // /72
			v4(b[11], b[12], b[13], b[14]), // /80
			v4(b[12], b[13], b[14], b[15]), // /96
		}
	}
	return nil
}
