package restaurant

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/testdb"
)

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
			db := testdb.OpenOn(b, backend, testdb.Migrations(API.Migrations()))
			srv, err := New(ctx, Config{Deps: Deps{DB: db, Logger: slog.New(slog.DiscardHandler)}, Settings: Settings{RatePerSecond: 1 << 30, RatePerWindow: 1 << 30}})
			require.NoError(b, err)
			r, err := srv.Operator().CreateRestaurant(ctx, "", "Bench Bistro")
			require.NoError(b, err)
			creds, err := srv.Operator().CreateClient(ctx, "bench", []string{r.GUID})
			require.NoError(b, err)
			data, err := json.Marshal(Document{MenuItems: benchItems(100)})
			require.NoError(b, err)
			_, err = srv.Operator().Import(ctx, r.GUID, data)
			require.NoError(b, err)
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

// benchItems returns n menu items without references.
func benchItems(n int) []restaurantapi.MenuItem {
	items := make([]restaurantapi.MenuItem, n)
	for i := range items {
		items[i] = restaurantapi.MenuItem{
			Guid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), EntityType: "MenuItem",
			Name: fmt.Sprintf("Dish %d", i), Sku: fmt.Sprintf("SKU-%d", i), Plu: fmt.Sprint(i),
			Type: restaurantapi.MenuItemTypeNONE, OptionGroups: []restaurantapi.ExternalReference{}, Images: []restaurantapi.Image{},
			UnitOfMeasure: restaurantapi.UnitOfMeasureNONE, OrderableOnline: restaurantapi.OrderableOnlineYES,
			Visibility: restaurantapi.VisibilityALL,
		}
	}
	return items
}
