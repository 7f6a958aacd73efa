package main

import (
	"log/slog"
	"net"
	"sync"
	"time"
)

// sourceListener refuses a connection from a source (a remote IP address)
// that already has max connections open on the listener: it is closed as
// soon as it is accepted, before it takes one of the port's
// --max-connections, so one source holding idle connections cannot fill
// the port for the others. Every connection it lets through must send its
// first byte within firstByte, or is closed.
type sourceListener struct {
	net.Listener
	max       int
	firstByte time.Duration
	logger    *slog.Logger

	mu      sync.Mutex
	held    int // refused connections waiting to be closed
	open    map[string]int
	refused map[string]time.Time // when a refusal was last logged, per source
}

// refusalDelay is how long a refused connection is held open, unread,
// before it is closed; at most maxHeldRefusals are held at once per
// listener, the next closed at once.
const (
	refusalDelay    = 2 * time.Second
	maxHeldRefusals = 1024
)

// newSourceListener wraps ln with the per-source cap and the first-byte
// timeout of l.
func newSourceListener(ln net.Listener, l connLimits, logger *slog.Logger) *sourceListener {
	return &sourceListener{Listener: ln, max: l.MaxPerSource, firstByte: l.FirstByteTimeout, logger: logger,
		open: map[string]int{}, refused: map[string]time.Time{}}
}

// sourceOf is the source a connection is counted under: its remote IP
// address (the port is not part of it).
func sourceOf(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// Accept returns the next connection whose source is under its cap,
// closing those over it.
func (l *sourceListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c)
		l.mu.Lock()
		if l.max > 0 && l.open[src] >= l.max {
			last, logged := l.refused[src]
			now := time.Now()
			if !logged || now.Sub(last) > time.Minute {
				l.refused[src] = now
			}
			held := l.held < maxHeldRefusals
			if held {
				l.held++
			}
			l.mu.Unlock()
			if held {
				// Closed a moment later, not at once: a source that reopens
				// each connection as it is closed would otherwise spin the
				// accept loop, and every other source's connections wait
				// behind its churn in the kernel's accept queue.
				time.AfterFunc(refusalDelay, func() {
					_ = c.Close()
					l.mu.Lock()
					l.held--
					l.mu.Unlock()
				})
			} else {
				_ = c.Close()
			}
			if !logged || now.Sub(last) > time.Minute {
				l.logger.Warn("connection refused: the source has --max-connections-per-source open", "source", src, "max", l.max)
			}
			continue
		}
		l.open[src]++
		l.mu.Unlock()
		return newFirstByteConn(c, l.firstByte, func() { l.release(src) }), nil
	}
}

func (l *sourceListener) release(src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[src]--; l.open[src] <= 0 {
		delete(l.open, src)
		delete(l.refused, src)
	}
}

// openFrom returns how many connections src has open (for tests).
func (l *sourceListener) openFrom(src string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[src]
}

// firstByteConn is a connection that must send its first byte before a
// deadline: until then any read deadline net/http sets is held to it, and
// once the byte arrived the deadline net/http asked for applies. Closing it
// releases its source's count, once.
type firstByteConn struct {
	net.Conn
	mu        sync.Mutex
	deadline  time.Time // zero once the first byte arrived
	requested time.Time // the read deadline net/http last set
	once      sync.Once
	released  func()
}

func newFirstByteConn(c net.Conn, timeout time.Duration, released func()) *firstByteConn {
	fc := &firstByteConn{Conn: c, released: released}
	if timeout > 0 {
		fc.deadline = time.Now().Add(timeout)
		_ = c.SetReadDeadline(fc.deadline)
	}
	return fc
}

func (c *firstByteConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if !c.deadline.IsZero() {
			c.deadline = time.Time{}
			_ = c.Conn.SetReadDeadline(c.requested)
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *firstByteConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requested = t
	if !c.deadline.IsZero() && (t.IsZero() || t.After(c.deadline)) {
		t = c.deadline
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *firstByteConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *firstByteConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.released)
	return err
}
