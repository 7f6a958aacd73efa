package apiserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
)

// The faults every API answers as what they are, each in its own error
// shape: a request body that stalled past the server's read timeout is 408
// (the caller's network, not the server, and never an authentication
// failure), and a database the server cannot reach or write is 503 with
// Retry-After (the server's state, temporary), not 500.

// RetryAfterUnavailable is the Retry-After, in seconds, of a 503 answered
// because a database is unavailable.
const RetryAfterUnavailable = "5"

// BodyTimeoutMessage is the message of the 408 of a stalled body: it names
// no address or internal error.
const BodyTimeoutMessage = "the request body did not arrive within the server's read timeout; send the request again"

// UnavailableMessage is the message of the 503 of an unavailable database.
const UnavailableMessage = "the service cannot reach its database; retry later"

// ErrBodyTimeout is the error of a request whose body stalled: reading it
// timed out.
var ErrBodyTimeout = errors.New("the request body stalled past the read timeout")

// IsTimeout reports whether err is a read or write that hit its deadline.
func IsTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Unavailable reports whether err says a database cannot be reached or
// written: a connection refused or reset, a pool closed, a bad connection,
// PostgreSQL's connection and resource errors (classes 08, 53, 57P0x), or
// SQLite's disk full, I/O error, read-only or cannot-open.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	if strings.Contains(err.Error(), errDBClosed) {
		return true
	}
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		state := pg.SQLState()
		return len(state) >= 2 && (state[:2] == "08" || state[:2] == "53" || state == "57P01" || state == "57P02" || state == "57P03")
	}
	var lite interface{ Code() int }
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case 10, 13, 14, 8: // SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_READONLY
			return true
		}
	}
	return isConnectError(err)
}

// errDBClosed is database/sql's message for a pool that was closed (its
// error value is not exported).
const errDBClosed = "sql: database is closed"

// isConnectError reports pgx's "failed to connect" (a *pgconn.ConnectError),
// recognized by its type name so that this package needs no pgx import.
func isConnectError(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if t := typeName(e); t == "*pgconn.ConnectError" {
			return true
		}
	}
	return false
}

// bodyWatchKey is the echo context key of the request's *bodyWatch.
const bodyWatchKey = "apiserver.bodyWatch"

// bodyWatch records how reading a request body failed, whoever read it and
// whatever error they made of it: it timed out (408), or the body did not
// arrive whole (400: malformed chunked framing, or the connection's writing
// half closed before the declared length).
type bodyWatch struct {
	io.ReadCloser
	timedOut atomic.Bool
	broken   atomic.Pointer[brokenBody]
}

// brokenBody is a body that did not arrive whole.
type brokenBody struct{ err error }

func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil || errors.Is(err, io.EOF):
	case IsTimeout(err):
		b.timedOut.Store(true)
	default:
		// net/http's body reader fails only on the wire: a chunked
		// framing it cannot parse, an end before the declared length, a
		// connection reset.
		b.broken.CompareAndSwap(nil, &brokenBody{err: err})
	}
	return n, err
}

// brokenRead is the read error of a body that did not arrive whole, or nil
// (b may be nil: no body was sent).
func (b *bodyWatch) brokenRead() error {
	if b == nil {
		return nil
	}
	if broken := b.broken.Load(); broken != nil {
		return broken.err
	}
	return nil
}

// watchBody wraps req's body so that how reading it failed is known after
// the handler returns (whatever error the reader made of it).
func watchBody(req *http.Request) (*http.Request, *bodyWatch) {
	w := &bodyWatch{ReadCloser: req.Body}
	watched := req.WithContext(req.Context())
	watched.Body = w
	return watched, w
}

// brokenBodyMessage says, naming no address, why a body that did not arrive
// whole was refused.
func brokenBodyMessage(req *http.Request, err error) string {
	chunked := len(req.TransferEncoding) > 0 && req.TransferEncoding[0] == "chunked"
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) && chunked:
		return "the request body ended before its last chunk; send the whole body"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the request body ended before the %d bytes its Content-Length declares; send the whole body", req.ContentLength)
	case chunked:
		return "the request body's chunked encoding is malformed: " + err.Error()
	}
	return "the request body could not be read whole; send it again"
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
