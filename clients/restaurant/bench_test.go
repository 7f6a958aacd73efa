package restaurant

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
)

// BenchmarkIterateMenuItems imports a demo menu of 10,000 and 100,000 items
// and iterates every menu item, once through List and once with a bare
// http.Client + encoding/json loop over the same pages, reporting items per
// second and the peak live heap while iterating. The server runs in the same
// process (rate limits raised, response validation off), so the peak heap
// is that of client and server together: an upper bound of the client's.
func BenchmarkIterateMenuItems(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		env, stop, err := restauranttest.Open(b.TempDir(), restauranttest.Options{
			RatePerSecond: 1 << 20, RatePerWindow: 1 << 30, SkipResponseValidation: true,
		}, nil)
		require.NoError(b, err)
		start := time.Now()
		env.ImportDemo(b, n)
		b.Logf("imported %d menu items (demo configuration) in %s", n, time.Since(start))
		c, err := New(Config{BaseURL: env.URL, ClientID: env.ClientID, ClientSecret: env.ClientSecret, Restaurant: env.Restaurant})
		require.NoError(b, err)
		ctx := context.Background()

		b.Run(fmt.Sprintf("client/items=%d", n), func(b *testing.B) {
			peak := watchHeap()
			for b.Loop() {
				count := 0
				for _, err := range List(ctx, c, MenuItems, nil) {
					if err != nil {
						b.Fatal(err)
					}
					count++
				}
				if count != n {
					b.Fatalf("iterated %d items, want %d", count, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
		})

		b.Run(fmt.Sprintf("bare/items=%d", n), func(b *testing.B) {
			token, err := c.Token(ctx)
			require.NoError(b, err)
			peak := watchHeap()
			for b.Loop() {
				if count := bareLoop(b, env.URL, env.Restaurant, token); count != n {
					b.Fatalf("iterated %d items, want %d", count, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
		})
		stop()
	}
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
		req.Header.Set(headerRestaurant, restaurantGUID)
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
