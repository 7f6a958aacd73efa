package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/netutil"
)

// connLimits are what every listener's server allows a connection: how long
// it may take to send a request and to read the answer, how long it may
// idle between requests, how large its header block may be, and how many
// connections a listener holds at once. Without them a caller holds a
// connection (and a file descriptor) as long as it likes: idle, or sending a
// body a byte a second.
type connLimits struct {
	// ReadHeaderTimeout bounds the wait for a request's header block,
	// including the first one of a new connection.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the request's header block
	// to the end of the answer.
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a kept-alive
	// connection.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's header block (request line included);
	// a larger one answers 431.
	MaxHeaderBytes int
	// MaxConnections caps the connections a listener has open at once; the
	// next wait in the kernel's accept queue until one closes.
	MaxConnections int
	// MaxPerSource caps the connections one source (remote IP address) has
	// open on a listener at once; the next are closed as they are accepted,
	// before they take one of MaxConnections.
	MaxPerSource int
	// FirstByteTimeout bounds the wait for a new connection's first byte.
	FirstByteTimeout time.Duration
}

// registerConnFlags declares the flags of connLimits on fs.
func registerConnFlags(fs *flag.FlagSet, l *connLimits) {
	fs.DurationVar(&l.ReadHeaderTimeout, "read-header-timeout", 10*time.Second, "longest wait for a request's header block, the first on a new connection included")
	fs.DurationVar(&l.ReadTimeout, "read-timeout", 30*time.Second, "longest time to read a whole request, body included")
	fs.DurationVar(&l.WriteTimeout, "write-timeout", 60*time.Second, "longest time from a request's header block to the end of its answer")
	fs.DurationVar(&l.IdleTimeout, "idle-timeout", 60*time.Second, "longest wait for the next request on a kept-alive connection")
	l.MaxHeaderBytes = 64 << 10
	fs.Var((*byteSize)(&l.MaxHeaderBytes), "max-header-bytes", "largest request header block (e.g. 64KiB, 1MiB or 65536); a larger one answers 431")
	fs.IntVar(&l.MaxConnections, "max-connections", 512, "most connections each API's port holds at once; more wait to be accepted")
	fs.IntVar(&l.MaxPerSource, "max-connections-per-source", 128, "most connections one source (remote IP address) holds on each API's port at once; more are closed as they arrive, so one source cannot fill a port")
	fs.DurationVar(&l.FirstByteTimeout, "first-byte-timeout", 5*time.Second, "longest wait for a new connection's first byte; a connection silent that long is closed")
}

// validate refuses limits that would disable what they are for.
func (l connLimits) validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"--read-header-timeout", l.ReadHeaderTimeout}, {"--read-timeout", l.ReadTimeout},
		{"--write-timeout", l.WriteTimeout}, {"--idle-timeout", l.IdleTimeout}, {"--first-byte-timeout", l.FirstByteTimeout},
	} {
		if d.v <= 0 {
			return fmt.Errorf("%s must be positive, not %s", d.name, d.v)
		}
	}
	if l.MaxHeaderBytes < 1<<10 {
		return fmt.Errorf("--max-header-bytes must be at least 1KiB, not %d", l.MaxHeaderBytes)
	}
	if l.MaxConnections < 1 {
		return fmt.Errorf("--max-connections must be at least 1, not %d", l.MaxConnections)
	}
	if l.MaxPerSource < 1 {
		return fmt.Errorf("--max-connections-per-source must be at least 1, not %d", l.MaxPerSource)
	}
	return nil
}

// newHTTPServer is the server `apistack serve` runs on each listener: handler
// behind the connection limits, requests' contexts outliving ctx (shutdown
// lets them finish), net/http's own errors logged as warnings.
func newHTTPServer(ctx context.Context, logger *slog.Logger, handler http.Handler, l connLimits) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: min(l.ReadHeaderTimeout, l.ReadTimeout),
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

// limitListener caps the connections ln has open at once, and those of
// each source: a connection over its source's cap is closed as it is
// accepted, without taking one of the listener's.
func limitListener(ln net.Listener, l connLimits, logger *slog.Logger) net.Listener {
	if l.MaxPerSource > 0 || l.FirstByteTimeout > 0 {
		ln = newSourceListener(ln, l, logger)
	}
	return netutil.LimitListener(ln, l.MaxConnections)
}

// byteSize is an int flag that takes a size with an optional binary unit:
// 65536, 64KiB, 1MiB (KB and MB are read as KiB and MiB).
type byteSize int

func (b *byteSize) String() string {
	switch n := int(*b); {
	case n != 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n != 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	default:
		return strconv.Itoa(n)
	}
}

func (b *byteSize) Set(s string) error {
	units := []struct {
		suffix string
		size   int
	}{{"KiB", 1 << 10}, {"KB", 1 << 10}, {"K", 1 << 10}, {"MiB", 1 << 20}, {"MB", 1 << 20}, {"M", 1 << 20}, {"B", 1}}
	number, unit := strings.TrimSpace(s), 1
	for _, u := range units {
		if rest, ok := strings.CutSuffix(number, u.suffix); ok {
			number, unit = strings.TrimSpace(rest), u.size
			break
		}
	}
	n, err := strconv.Atoi(number)
	if err != nil || n < 0 || n > (1<<31-1)/unit {
		return fmt.Errorf("%q is not a size such as 65536, 64KiB or 1MiB", s)
	}
	*b = byteSize(n * unit)
	return nil
}

// descriptorsReserved are the file descriptors serve needs besides its
// connections: databases and their WAL files, listeners, outbound requests.
const descriptorsReserved = 64

// descriptorShortfall returns a warning when listeners ports holding
// l.MaxConnections connections each could use more file descriptors than the
// process may open (limit; 0 when unknown), and "" otherwise. Past that
// limit accept fails with "too many open files" and ports stop answering,
// whichever port the connections came to.
func descriptorShortfall(l connLimits, listeners int, limit uint64) string {
	need := uint64(l.MaxConnections)*uint64(listeners) + descriptorsReserved
	if limit == 0 || need <= limit {
		return ""
	}
	fit := (limit - min(limit, descriptorsReserved)) / uint64(listeners)
	return fmt.Sprintf("%d ports of --max-connections %d may need %d file descriptors, but the process may open %d: "+
		"raise the limit (ulimit -n) or give --max-connections %d or less", listeners, l.MaxConnections, need, limit, fit)
}
