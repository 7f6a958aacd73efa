package restaurant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/apistack/apistack/clients/restaurant"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	restaurantserver "github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
)

// BenchmarkIterateMenuItems imports a demo menu of 10,000 and 100,000 items
// and iterates every menu item through List, comparing it with a bare
// http.Client + encoding/json loop over the same pages.
//
//   - walk: each iteration walks the whole menu once through the client and
//     once with the bare loop, back to back, so both see the same machine;
//     it reports both rates in items per second and their ratio.
//   - heap: the client alone, reporting the peak live heap while iterating.
//
// The server runs in a child process (this test binary, started again as a
// server), so the heap measured here is the client's alone.
func BenchmarkIterateMenuItems(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		srv := startBenchServer(b, n)
		b.Logf("imported %d menu items (demo configuration) in %.2fs", n, srv.ImportSeconds)
		c, err := restaurant.New(restaurant.Config{BaseURL: srv.URL, ClientID: srv.ClientID, ClientSecret: srv.ClientSecret, Restaurant: srv.Restaurant})
		require.NoError(b, err)
		ctx := context.Background()
		token, err := c.Token(ctx)
		require.NoError(b, err)

		b.Run(fmt.Sprintf("walk/items=%d", n), func(b *testing.B) {
			var clientTime, bareTime time.Duration
			for b.Loop() {
				start := time.Now()
				if count := clientWalk(b, c); count != n {
					b.Fatalf("client iterated %d items, want %d", count, n)
				}
				mid := time.Now()
				if count := bareLoop(b, srv.URL, srv.Restaurant, token); count != n {
					b.Fatalf("bare loop iterated %d items, want %d", count, n)
				}
				clientTime += mid.Sub(start)
				bareTime += time.Since(mid)
			}
			items := float64(n) * float64(b.N)
			b.ReportMetric(items/clientTime.Seconds(), "client-items/s")
			b.ReportMetric(items/bareTime.Seconds(), "bare-items/s")
			b.ReportMetric(bareTime.Seconds()/clientTime.Seconds(), "client/bare")
		})

		b.Run(fmt.Sprintf("heap/items=%d", n), func(b *testing.B) {
			peak := watchHeap()
			for b.Loop() {
				if count := clientWalk(b, c); count != n {
					b.Fatalf("iterated %d items, want %d", count, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
		})
		srv.stop()
	}
}

// clientWalk iterates every menu item through the client.
func clientWalk(b *testing.B, c *restaurant.Client) int {
	count := 0
	for _, err := range c.ListMenuItems(context.Background(), nil) {
		if err != nil {
			b.Fatal(err)
		}
		count++
	}
	return count
}

// benchServerEnv, set to a number of menu items, makes the test binary a
// restaurant server for the benchmark instead of running tests.
const benchServerEnv = "APISTACK_RESTAURANT_BENCH_SERVER_ITEMS"

// benchServer is what the child server reports on its standard output.
type benchServer struct {
	URL, ClientID, ClientSecret, Restaurant string
	ImportSeconds                           float64
	stop                                    func()
}

func TestMain(m *testing.M) {
	if items := os.Getenv(benchServerEnv); items != "" {
		if err := serveForBenchmark(items); err != nil {
			fmt.Fprintln(os.Stderr, "bench server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveForBenchmark imports the demo menu, prints where the server is, and
// serves until its standard input is closed.
func serveForBenchmark(items string) error {
	n, err := strconv.Atoi(items)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "restaurant-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env, stop, err := restauranttest.Open(dir, restauranttest.Options{SkipResponseValidation: true, Settings: restaurantserver.Settings{RatePerSecond: 1 << 20, RatePerWindow: 1 << 30}}, nil)
	if err != nil {
		return err
	}
	defer stop()
	start := time.Now()
	if _, err := env.ImportDemoErr(n); err != nil {
		return err
	}
	if err := json.NewEncoder(os.Stdout).Encode(benchServer{
		URL: env.URL, ClientID: env.ClientID, ClientSecret: env.ClientSecret, Restaurant: env.Restaurant,
		ImportSeconds: time.Since(start).Seconds(),
	}); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// startBenchServer starts the child server with n menu items.
func startBenchServer(b *testing.B, n int) benchServer {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", benchServerEnv, n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	var srv benchServer
	require.NoError(b, json.NewDecoder(stdout).Decode(&srv))
	srv.stop = func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}
	b.Cleanup(srv.stop)
	return srv
}

// bareLoop is the baseline: plain GETs of the same pages decoded with
// encoding/json into the same type, without login caching, retries or
// iterators.
func bareLoop(b *testing.B, base, restaurantGUID, token string) int {
	count := 0
	q := url.Values{"pageSize": {"300"}}
	for {
		req, err := http.NewRequest(http.MethodGet, base+"/config/v2/menuItems?"+q.Encode(), nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Platform-Restaurant-External-ID", restaurantGUID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var page []restaurantapi.MenuItem
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("page: %d %v", resp.StatusCode, err)
		}
		count += len(page)
		next := resp.Header.Get("Platform-Next-Page-Token")
		if next == "" {
			return count
		}
		q.Set("pageToken", next)
	}
}

// watchHeap samples the live heap every millisecond from now on; the
// returned function stops sampling and returns the peak.
func watchHeap() func() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			mu.Lock()
			peak = max(peak, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
