package main

import (
	"flag"
	"fmt"
	"net"
	"strings"
)

// destinationFlags are serve's flags of the fax destination policy, beside
// --fax-allow-private-destinations.
type destinationFlags struct {
	// Allow are host:port destinations allowed on any address but
	// link-local and metadata ones (--fax-allow-destination, repeatable).
	Allow hostPorts
}

// registerDestinationFlags declares the flags of d on fs.
func registerDestinationFlags(fs *flag.FlagSet, d *destinationFlags) {
	fs.Var(&d.Allow, "fax-allow-destination", "a host:port media_url and webhook URLs may reach even on a loopback or private address (repeatable, or comma-separated); "+
		"link-local and cloud-metadata addresses stay refused")
}

// hostPorts is a repeatable flag of host:port values (also comma-separated).
type hostPorts []string

func (h *hostPorts) String() string { return strings.Join(*h, ",") }

func (h *hostPorts) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		host, port, err := net.SplitHostPort(v)
		if err != nil || host == "" || port == "" {
			return fmt.Errorf("%q is not host:port (e.g. hooks.internal:8443)", v)
		}
		*h = append(*h, v)
	}
	return nil
}

// localStack reports whether the stack is local: every listener on a
// loopback address and no shared database. Its tenants are then the
// developer, and its fax URLs may reach loopback (their own services, and
// `apistack conform`'s receiver).
func localStack(listeners []listener, database string) bool {
	if database != "" {
		return false
	}
	for _, l := range listeners {
		addr := l.tcpAddr()
		if addr == nil || !addr.IP.IsLoopback() {
			return false
		}
	}
	return len(listeners) > 0
}
