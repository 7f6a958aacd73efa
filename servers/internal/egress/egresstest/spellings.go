// Package egresstest lists the spellings of refused destinations that
// every test of a URL's entry point (an API field, an admin call, a
// command's flag) runs through: the forms in which an address can hide
// from a check that compares only the usual spelling.
package egresstest

// Kind is what the address a spelling spells is to the destination policy.
type Kind int

// The kinds of refused addresses.
const (
	// Metadata is a link-local or cloud-metadata address: refused whatever
	// the policy's options.
	Metadata Kind = iota + 1
	// Private is a private address: refused unless private destinations
	// are allowed.
	Private
	// Loopback is a loopback address: refused unless loopback (or every
	// private destination) is allowed.
	Loopback
)

// Spelling is one way of writing an address in a URL.
type Spelling struct {
	// Name says which form it is.
	Name string
	// Host is the URL's host part (brackets around an IPv6 literal); the
	// URL is "http://" + Host + "/hook".
	Host string
	// Addr is the address it spells, as netip writes it.
	Addr string
	Kind Kind
}

// URL is the spelling's URL.
func (s Spelling) URL() string { return "http://" + s.Host + "/hook" }

// Spellings are the refused addresses, each in its every form: dotted,
// decimal, hexadecimal, octal, short, with a trailing dot, and each IPv6
// form that carries an IPv4 address (IPv4-mapped, -compatible,
// -translated, NAT64's well-known and local-use prefixes, 6to4, Teredo).
var Spellings = []Spelling{
	{"metadata, dotted", "169.254.169.254", "169.254.169.254", Metadata},
	{"metadata, decimal", "2852039166", "169.254.169.254", Metadata},
	{"metadata, hexadecimal", "0xa9fea9fe", "169.254.169.254", Metadata},
	{"metadata, hexadecimal parts", "0xA9.0xFE.0xA9.0xFE", "169.254.169.254", Metadata},
	{"metadata, octal", "0251.0376.0251.0376", "169.254.169.254", Metadata},
	{"metadata, short", "169.254.43518", "169.254.169.254", Metadata},
	{"metadata, trailing dot", "169.254.169.254.", "169.254.169.254", Metadata},
	{"metadata, IPv4-mapped", "[::ffff:169.254.169.254]", "169.254.169.254", Metadata},
	{"metadata, IPv4-mapped hex", "[::ffff:a9fe:a9fe]", "169.254.169.254", Metadata},
	{"metadata, IPv4-compatible", "[::169.254.169.254]", "169.254.169.254", Metadata},
	{"metadata, IPv4-translated", "[::ffff:0:169.254.169.254]", "169.254.169.254", Metadata},
	{"metadata, NAT64", "[64:ff9b::169.254.169.254]", "169.254.169.254", Metadata},
	{"metadata, local-use NAT64", "[64:ff9b:1::a9fe:a9fe]", "169.254.169.254", Metadata},
	{"metadata, 6to4", "[2002:a9fe:a9fe::1]", "169.254.169.254", Metadata},
	{"metadata, IPv6", "[fd00:ec2::254]", "fd00:ec2::254", Metadata},
	{"metadata, Alibaba", "100.100.100.200", "100.100.100.200", Metadata},
	{"private, IPv4-compatible", "[::10.0.0.5]", "10.0.0.5", Private},
	{"private, IPv4-translated", "[::ffff:0:10.0.0.5]", "10.0.0.5", Private},
	{"private, decimal", "167772165", "10.0.0.5", Private},
	{"private, octal first part", "012.0.0.5", "10.0.0.5", Private},
	{"loopback, IPv4-compatible", "[::127.0.0.1]", "127.0.0.1", Loopback},
	{"loopback, short", "127.1", "127.0.0.1", Loopback},
	{"loopback, decimal", "2130706433", "127.0.0.1", Loopback},
	{"loopback, hexadecimal", "0x7f000001", "127.0.0.1", Loopback},
	{"loopback, octal", "017700000001", "127.0.0.1", Loopback},
	{"loopback, trailing dot", "127.0.0.1.", "127.0.0.1", Loopback},
	{"loopback, NAT64", "[64:ff9b::7f00:1]", "127.0.0.1", Loopback},
}
