//go:build !linux

package main

import "net"

// port is an API's address, bound at start so that a port in use fails the
// start at once and the URLs are known before the stack is built. Off Linux
// it listens from the start, but nothing is accepted until the stack is
// ready: a connection made meanwhile waits, and its request is answered by
// the ready stack.
type port struct {
	ln net.Listener
}

// reservePort binds addr ("host:port"; port 0 picks one).
func reservePort(addr string) (*port, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &port{ln: ln}, nil
}

// Addr is the bound address.
func (p *port) Addr() *net.TCPAddr { return p.ln.Addr().(*net.TCPAddr) }

// listen hands the listener over: connections are accepted from now on.
func (p *port) listen() (net.Listener, error) {
	ln := p.ln
	p.ln = nil
	return ln, nil
}

// close releases a port that was never handed over.
func (p *port) close() {
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
}
