package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testLimits are small enough that a test sees every limit act within a
// second or two.
var testLimits = connLimits{
	ReadHeaderTimeout: 300 * time.Millisecond,
	ReadTimeout:       500 * time.Millisecond,
	WriteTimeout:      2 * time.Second,
	IdleTimeout:       300 * time.Millisecond,
	MaxHeaderBytes:    4 << 10,
	MaxConnections:    8,
}

// startLimited serves handler through runServers, the path `apistack serve`
// takes, with limits, and returns its address.
func startLimited(t testing.TB, limits connLimits, handler http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		done <- runServers(ctx, logger, []listener{{name: "test", ln: ln, handler: handler}}, limits, shutdownPlan{timeout: 5 * time.Second})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ln.Addr().String()
}

// echoLength reads the whole body and answers its length.
var echoLength = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Fprint(w, n)
})

// waitClosed reads conn until the server closes it and returns how long
// that took; the test fails if the server keeps it open past within. It may
// run on any goroutine.
func waitClosed(t *testing.T, conn net.Conn, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	assert.NoError(t, conn.SetReadDeadline(start.Add(within)))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the server kept the connection open past %v", within)
	}
	return time.Since(start)
}

func TestRunServers_SlowBodiesAndIdleFloodDoNotStallOthers(t *testing.T) {
	addr := startLimited(t, testLimits, echoLength)

	// A normal client, on a new connection each time, keeps asking while the
	// port is flooded; every request must be answered.
	stopClient := make(chan struct{})
	var answered, failed atomic.Int64
	var firstErr atomic.Value
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		for {
			select {
			case <-stopClient:
				return
			default:
			}
			resp, err := client.Post("http://"+addr+"/", "text/plain", strings.NewReader("hello"))
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(body) != "5" {
					err = fmt.Errorf("answered %s %q", resp.Status, body)
				}
			}
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				continue
			}
			answered.Add(1)
		}
	}()

	// Twice as many connections as the port holds: half send a body a byte
	// every 100 ms (1000 bytes: 100 s), half send nothing at all.
	const flood = 2 * 8
	var wg sync.WaitGroup
	held := make([]time.Duration, flood)
	for i := range flood {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		slow := i%2 == 0
		wg.Go(func() {
			if slow {
				stop := make(chan struct{})
				defer close(stop)
				go func() {
					if _, err := fmt.Fprint(conn, "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 1000\r\n\r\n"); err != nil {
						return
					}
					tick := time.NewTicker(100 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							if _, err := conn.Write([]byte("x")); err != nil {
								return
							}
						}
					}
				}()
			}
			held[i] = waitClosed(t, conn, 20*time.Second)
		})
	}
	wg.Wait()
	close(stopClient)
	<-clientDone

	for i, d := range held {
		t.Logf("flood connection %d (slow body: %v) held %v", i, i%2 == 0, d.Round(time.Millisecond))
	}
	for i, d := range held {
		// Without the limits a slow body holds its connection for 100 s and
		// an idle one forever.
		assert.Less(t, d, 5*time.Second, "flood connection %d", i)
	}
	t.Logf("the normal client got %d answers meanwhile, %d failures", answered.Load(), failed.Load())
	assert.Zero(t, failed.Load(), "the normal client failed: %v", firstErr.Load())
	assert.Positive(t, answered.Load())
}

func TestRunServers_CapsConnectionsPerListener(t *testing.T) {
	var inflight, most atomic.Int64
	release := make(chan struct{})
	addr := startLimited(t, testLimits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
	}))
	const callers = 12
	var wg sync.WaitGroup
	var ok atomic.Int64
	for range callers {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := client.Get("http://" + addr + "/")
			if assert.NoError(t, err) {
				resp.Body.Close()
				ok.Add(1)
			}
		})
	}
	require.Eventually(t, func() bool { return inflight.Load() == int64(testLimits.MaxConnections) }, 10*time.Second, 5*time.Millisecond)
	assert.Never(t, func() bool { return inflight.Load() > int64(testLimits.MaxConnections) }, 300*time.Millisecond, 5*time.Millisecond,
		"more connections served at once than --max-connections")
	close(release)
	wg.Wait()
	assert.Equal(t, int64(callers), ok.Load(), "the callers over the cap waited and were answered")
	assert.Equal(t, int64(testLimits.MaxConnections), most.Load())
}

func TestRunServers_IdleKeptAliveConnectionIsClosed(t *testing.T) {
	addr := startLimited(t, testLimits, echoLength)
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	idle := waitClosed(t, conn, 10*time.Second)
	t.Logf("an idle kept-alive connection was closed after %v (idle timeout %v)", idle.Round(time.Millisecond), testLimits.IdleTimeout)
	assert.GreaterOrEqual(t, idle, testLimits.IdleTimeout/2)
}

func TestRunServers_OversizeHeaderBlockIs431(t *testing.T) {
	defaults, err := parseServeFlags(nil, io.Discard)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		limits connLimits
	}{
		{"test limits", testLimits},
		{"serve's defaults", defaults.Conn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := startLimited(t, tc.limits, echoLength)
			send := func(headerBytes int) int {
				req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
				require.NoError(t, err)
				for i := 0; headerBytes > 0; i++ {
					v := strings.Repeat("v", min(headerBytes, 1000))
					req.Header.Set(fmt.Sprintf("X-Filler-%d", i), v)
					headerBytes -= len(v) + 16
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				return resp.StatusCode
			}
			assert.Equal(t, http.StatusOK, send(tc.limits.MaxHeaderBytes/2), "a header block under the limit")
			// net/http allows 4 KiB over MaxHeaderBytes for the request line.
			assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, send(tc.limits.MaxHeaderBytes+8<<10), "a header block over the limit")
		})
	}
}

func TestServeFlags_ConnectionLimits(t *testing.T) {
	c, err := parseServeFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, connLimits{
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10, MaxConnections: 512,
		MaxPerSource: 128, FirstByteTimeout: 5 * time.Second,
	}, c.Conn, "defaults")

	t.Setenv("APISTACK_MAX_HEADER_BYTES", "1MiB")
	t.Setenv("APISTACK_IDLE_TIMEOUT", "5s")
	c, err = parseServeFlags([]string{"--read-timeout", "3s", "--max-connections", "20", "--max-header-bytes", "32KiB"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, c.Conn.ReadTimeout)
	assert.Equal(t, 5*time.Second, c.Conn.IdleTimeout, "from APISTACK_IDLE_TIMEOUT")
	assert.Equal(t, 20, c.Conn.MaxConnections)
	assert.Equal(t, 32<<10, c.Conn.MaxHeaderBytes, "a flag wins over its variable")

	for _, args := range [][]string{
		{"--read-timeout", "0s"},
		{"--max-connections", "0"},
		{"--max-connections-per-source", "0"},
		{"--first-byte-timeout", "0s"},
		{"--max-header-bytes", "lots"},
		{"--max-header-bytes", "100"},
	} {
		_, err := parseServeFlags(args, io.Discard)
		assert.Error(t, err, "%v", args)
	}
}

func TestByteSize_ParsesUnits(t *testing.T) {
	for in, want := range map[string]int{"65536": 65536, "64KiB": 64 << 10, "64KB": 64 << 10, "1MiB": 1 << 20, "2M": 2 << 20, "512B": 512} {
		var b byteSize
		require.NoError(t, b.Set(in), in)
		assert.Equal(t, want, int(b), in)
	}
	for _, in := range []string{"", "KiB", "-1", "1.5MiB", "3GiB", "99999999MiB"} {
		var b byteSize
		assert.Error(t, b.Set(in), in)
	}
	b := byteSize(64 << 10)
	assert.Equal(t, "64KiB", b.String())
}

func TestDescriptorShortfall(t *testing.T) {
	l := connLimits{MaxConnections: 512}
	assert.Empty(t, descriptorShortfall(l, 5, 1<<20), "plenty")
	assert.Empty(t, descriptorShortfall(l, 5, 0), "unknown limit")
	assert.Empty(t, descriptorShortfall(l, 5, 5*512+descriptorsReserved), "exactly enough")
	warning := descriptorShortfall(l, 5, 1024)
	assert.Contains(t, warning, "need 2624 file descriptors")
	assert.Contains(t, warning, "--max-connections 192 or less")
	assert.Equal(t, "", descriptorShortfall(connLimits{MaxConnections: 192}, 5, 1024), "the advice fits")
	assert.NotEmpty(t, descriptorShortfall(l, 5, 10), "a limit under the reserve")
}

func TestOpenFileLimit_IsReadOnThisSystem(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no RLIMIT_NOFILE")
	}
	n := openFileLimit()
	t.Logf("this process may open %d file descriptors", n)
	assert.Positive(t, n)
}
