package storage

import (
	"cmp"
	"flag"
)

// Settings are the storage server's knobs: the one place each is declared,
// with its default. The zero value of a field means its default. `apistack
// serve` binds its --storage-* flags to them (RegisterFlags); the stack
// (servers/stack) and the test kit (apistacktest) take them as they are.
type Settings struct {
	// Region is the region requests must be signed for; "" means DefaultRegion.
	Region string
	// Domain is the domain of virtual-host-style addresses; "" means DefaultDomain.
	Domain string
}

// withDefaults returns s with every zero field set to its default.
func (s Settings) withDefaults() Settings {
	s.Region = cmp.Or(s.Region, DefaultRegion)
	s.Domain = cmp.Or(s.Domain, DefaultDomain)
	return s
}

// RegisterFlags declares the --storage-* flags of `apistack serve` on fs,
// bound to s and showing the defaults.
func (s *Settings) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.Region, "storage-region", DefaultRegion, "region storage requests are signed for")
	fs.StringVar(&s.Domain, "storage-domain", DefaultDomain, "domain of virtual-host-style storage addresses, {bucket}.{region}.{domain}")
}
