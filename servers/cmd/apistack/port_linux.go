//go:build linux

package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// port is an API's address, bound at start so that a port in use fails the
// start at once and the URLs are known before the stack is built, but not
// listening until the stack is ready: until then a connection to it is
// refused, never accepted and answered half-ready.
type port struct {
	fd   int
	addr *net.TCPAddr
}

// reservePort binds addr ("host:port"; port 0 picks one) without listening.
func reservePort(addr string) (*port, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, err
	}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		return bindPort(syscall.AF_INET, sa, false)
	}
	sa := &syscall.SockaddrInet6{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To16())
	p, err := bindPort(syscall.AF_INET6, sa, ta.IP == nil)
	if err != nil && ta.IP == nil && errors.Is(err, syscall.EAFNOSUPPORT) {
		// A wildcard on a machine without IPv6: IPv4's.
		return bindPort(syscall.AF_INET, &syscall.SockaddrInet4{Port: ta.Port}, false)
	}
	return p, err
}

// bindPort opens a TCP socket of family and binds it to sa; dualStack lets
// an IPv6 wildcard take IPv4 connections too, as net.Listen's does.
func bindPort(family int, sa syscall.Sockaddr, dualStack bool) (*port, error) {
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("setsockopt: %w", err)
	}
	if dualStack {
		if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 0); err != nil {
			_ = syscall.Close(fd)
			return nil, fmt.Errorf("setsockopt: %w", err)
		}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("bind: %w", err)
	}
	got, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("getsockname: %w", err)
	}
	p := &port{fd: fd}
	switch a := got.(type) {
	case *syscall.SockaddrInet4:
		p.addr = &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *syscall.SockaddrInet6:
		p.addr = &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	}
	return p, nil
}

// Addr is the bound address.
func (p *port) Addr() *net.TCPAddr { return p.addr }

// listen starts listening: connections are accepted from now on.
func (p *port) listen() (net.Listener, error) {
	if err := syscall.Listen(p.fd, syscall.SOMAXCONN); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	f := os.NewFile(uintptr(p.fd), "tcp port")
	p.fd = -1
	defer f.Close()
	return net.FileListener(f) // a copy of the descriptor
}

// close releases a port that never listened.
func (p *port) close() {
	if p.fd >= 0 {
		_ = syscall.Close(p.fd)
		p.fd = -1
	}
}
