package restaurant

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/servers/internal/benchproc"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/testdb"
)

// BenchmarkListMenuItems measures one replica answering a list of 100 menu
// items on each backend, with request validation on as `apistack serve` runs
// by default: serially (one client: the latency of a request) and under 16
// concurrent clients (raw HTTP, bodies read and discarded).
//
// The two backends do different work per request. On SQLite the process
// owns the database: the token, the grant and the page come from its caches
// after the first request, and the rate limits live in memory. On
// PostgreSQL the replicas share the database, so nothing read from it is
// cached: each request reads the token, the grant and the page, and spends
// both rate limits (per second and per window) with an upsert each.
// BenchmarkListMenuItemsSteps times those steps.
func BenchmarkListMenuItems(b *testing.B) {
	for _, backend := range []testdb.Backend{testdb.SQLite, testdb.Postgres} {
		b.Run(string(backend), func(b *testing.B) {
			url, header := startListBenchmark(b, backend)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			get := func(b *testing.B) bool {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header = header.Clone()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return false
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n < 10000 {
					b.Errorf("list: status %d, %d bytes", resp.StatusCode, n)
					return false
				}
				return true
			}
			b.Run("serial", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if !get(b) {
						return
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
			b.Run("16clients", func(b *testing.B) {
				b.SetParallelism(8) // 16 clients on 2 cores
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if !get(b) {
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
		})
	}
}

// startListBenchmark starts a restaurant server on backend with 100 menu
// items imported and returns the URL of their list and the headers of a
// request for it.
func startListBenchmark(b testing.TB, backend testdb.Backend) (string, http.Header) {
	b.Helper()
	ctx := context.Background()
	srv, r, creds := benchServer(b, backend)
	h, err := srv.Handler()
	require.NoError(b, err)
	hs := httptest.NewServer(h)
	b.Cleanup(hs.Close)
	api, err := restaurantapi.NewClientWithResponses(hs.URL)
	require.NoError(b, err)
	login, err := api.LoginWithResponse(ctx, restaurantapi.LoginJSONRequestBody{ClientId: creds.ClientID, ClientSecret: creds.ClientSecret,
		UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, login.StatusCode(), string(login.Body))
	header := http.Header{
		"Authorization":                   {"Bearer " + login.JSON200.Token.AccessToken},
		"Platform-Restaurant-External-Id": {r.GUID},
	}
	return hs.URL + "/config/v2/menuItems?pageSize=100", header
}

// TestBenchProcessServer is the server of BenchmarkProcess, run in a child
// process of it (benchproc): a restaurant server with 100 menu items
// (startListBenchmark) on the backend the benchmark asks for. Run alone, it
// skips.
func TestBenchProcessServer(t *testing.T) {
	benchproc.Child(t, func(t testing.TB, backend testdb.Backend) (string, map[string]string) {
		url, header := startListBenchmark(t, backend)
		return url, map[string]string{"authorization": header.Get("Authorization"), "restaurant": header.Get("Platform-Restaurant-External-Id")}
	})
}

// BenchmarkProcess compares one restaurant server process on SQLite with
// one on PostgreSQL listing 100 menu items to 16 clients, each server in a
// child process of its own (benchproc), in interleaved rounds: requests per
// second, the server's CPU time and allocations per request, PostgreSQL's
// own CPU apart. Run with -benchtime 1x.
func BenchmarkProcess(b *testing.B) {
	procs := [2]*benchproc.Proc{
		benchproc.Start(b, "TestBenchProcessServer", testdb.SQLite),
		benchproc.Start(b, "TestBenchProcessServer", testdb.Postgres),
	}
	b.Run("list100", func(b *testing.B) {
		benchproc.Interleave(b, 5, procs, func(p *benchproc.Proc) benchproc.Result {
			return p.Round(b, 3000, 16, func(p *benchproc.Proc, _ int64) *http.Request {
				req, _ := http.NewRequest(http.MethodGet, p.URL, nil)
				req.Header.Set("Authorization", p.Info["authorization"])
				req.Header.Set("Platform-Restaurant-External-Id", p.Info["restaurant"])
				return req
			}, http.StatusOK, 10000)
		})
	})
}

// BenchmarkListMenuItemsSteps times, on each backend, the database steps of
// one list request of 100 menu items (BenchmarkListMenuItems) one at a time,
// uncached: reading the bearer token, reading the grant, spending one rate
// limit (twice per request: per second and per window) and reading the page.
// On SQLite the rate limit is the in-memory store and the token, grant and
// page normally come from the caches; on PostgreSQL every step is a round
// trip. The rate limit is also timed with 16 concurrent takers of the one
// restaurant's row.
func BenchmarkListMenuItemsSteps(b *testing.B) {
	for _, backend := range []testdb.Backend{testdb.SQLite, testdb.Postgres} {
		b.Run(string(backend), func(b *testing.B) {
			ctx := context.Background()
			srv, r, creds := benchServer(b, backend)
			token := hashSecret("bench token")
			require.NoError(b, srv.store.insertToken(ctx, token, creds.ClientID, time.Now().Add(time.Hour)))
			uncached := &store{db: srv.store.db, pages: cache.New[cachedPage](0, time.Minute)}
			limiter := srv.limiters[0].limiter

			b.Run("token", func(b *testing.B) {
				for b.Loop() {
					if _, _, _, err := srv.store.tokenByHash(ctx, token); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("grant", func(b *testing.B) {
				for b.Loop() {
					if _, granted, err := srv.store.access(ctx, creds.ClientID, r.GUID); err != nil || !granted {
						b.Fatal(err, granted)
					}
				}
			})
			// The limiter's finest interval is a microsecond: takes faster
			// than that (the memory store's) are refused, and counted.
			b.Run("ratelimit", func(b *testing.B) {
				refused := 0
				for b.Loop() {
					d, err := limiter.Take(ctx, r.GUID)
					if err != nil {
						b.Fatal(err)
					}
					if !d.Allowed {
						refused++
					}
				}
				b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
			})
			b.Run("ratelimit-16clients", func(b *testing.B) {
				var refused atomic.Int64
				b.SetParallelism(8) // 16 on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						d, err := limiter.Take(ctx, r.GUID)
						if err != nil {
							b.Error(err)
							return
						}
						if !d.Allowed {
							refused.Add(1)
						}
					}
				})
				b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
			})
			b.Run("page", func(b *testing.B) {
				for b.Loop() {
					rows, _, err := uncached.page(ctx, pageQuery{Restaurant: r.GUID, Kind: "menuItems", Limit: 100})
					if err != nil || len(rows) != 100 {
						b.Fatal(err, len(rows))
					}
				}
			})
		})
	}
}

// plainItems returns n menu items without references, named by prefix.
func plainItems(prefix string, n int) []restaurantapi.MenuItem {
	items := make([]restaurantapi.MenuItem, n)
	for i := range items {
		items[i] = restaurantapi.MenuItem{
			Guid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), EntityType: "MenuItem",
			Name: fmt.Sprintf("%s %d", prefix, i), Sku: fmt.Sprintf("SKU-%d", i), Plu: fmt.Sprint(i),
			Type: restaurantapi.MenuItemTypeNONE, OptionGroups: []restaurantapi.ExternalReference{}, Images: []restaurantapi.Image{},
			UnitOfMeasure: restaurantapi.UnitOfMeasureNONE, OrderableOnline: restaurantapi.OrderableOnlineYES,
			Visibility: restaurantapi.VisibilityALL,
		}
	}
	return items
}

// benchServer is a restaurant server on backend, its rate limits out of
// the way, with a restaurant holding 100 menu items (plainItems) and an API
// client granted it.
func benchServer(b testing.TB, backend testdb.Backend) (*Server, Restaurant, ClientCredentials) {
	b.Helper()
	ctx := context.Background()
	db := testdb.OpenOn(b, backend, testdb.Migrations(API.Migrations()))
	srv, err := New(ctx, Config{Deps: Deps{DB: db, Logger: slog.New(slog.DiscardHandler)}, Settings: Settings{RatePerSecond: 1 << 30, RatePerWindow: 1 << 30}})
	require.NoError(b, err)
	r, err := srv.Operator().CreateRestaurant(ctx, "", "Bench Bistro")
	require.NoError(b, err)
	creds, err := srv.Operator().CreateClient(ctx, "bench", []string{r.GUID})
	require.NoError(b, err)
	data, err := json.Marshal(Document{MenuItems: plainItems("Dish", 100)})
	require.NoError(b, err)
	_, err = srv.Operator().Import(ctx, r.GUID, data)
	require.NoError(b, err)
	return srv, r, creds
}
