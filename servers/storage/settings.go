package storage

// Settings are the storage server's knobs: the one place each is declared,
// with its default and its flag of `apistack serve` (tags read by
// servers/internal/descriptor). The zero value of a field means its default
// (DefaultRegion, DefaultDomain: a test holds the tags to them). The stack
// (servers/stack), serve and the test kit (apistacktest) take them as they
// are.
type Settings struct {
	// Region is the region requests must be signed for.
	Region string `flag:"storage-region" default:"local-1" help:"region storage requests are signed for"`
	// Domain is the domain of virtual-host-style addresses.
	Domain string `flag:"storage-domain" default:"localhost" help:"domain of virtual-host-style storage addresses, {bucket}.{region}.{domain}"`
}
