package main

import (
	"fmt"
	"net"
	"strings"
)

// checkAdminAddr refuses an admin address that is not on loopback unless
// allowRemote: the admin API creates tenants and keys for every API, and its
// token is all that guards it, so by default it must not face any network.
// An address counts as loopback when its host is a loopback IP or
// "localhost"; an empty host or an unspecified IP (every interface) and any
// other name do not.
func checkAdminAddr(addr string, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--admin-addr %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--admin-addr %q is not on loopback: the admin API must not face a network; "+
		"give --admin-allow-remote (APISTACK_ADMIN_ALLOW_REMOTE=true) to serve it there anyway, behind its token", addr)
}
