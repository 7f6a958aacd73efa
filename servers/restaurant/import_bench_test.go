package restaurant_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/restaurant"
)

// BenchmarkImportDemoRestaurant imports the demo restaurant's configuration
// (500 menu items, the size of a sandbox's demo restaurant and of the
// sandbox benchmarks' fixture) into a new restaurant per iteration, on the
// run's backend: the median of the imports, import-ms-median. It is the
// restaurant's share of a sandbox created from a fixture.
func BenchmarkImportDemoRestaurant(b *testing.B) {
	ctx := context.Background()
	db := testdb.Open(b, testdb.Migrations(restaurant.API.Migrations()))
	srv, err := restaurant.New(ctx, restaurant.Config{Deps: restaurant.Deps{DB: db, Clock: clock.NewFake(t0)}})
	require.NoError(b, err)
	doc, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: 500, Seed: 1}))
	require.NoError(b, err)
	var took []time.Duration
	for b.Loop() {
		guid := uuid.NewString()
		_, err := srv.Operator().CreateRestaurant(ctx, guid, "Bench")
		require.NoError(b, err)
		start := time.Now()
		_, err = srv.Operator().Import(ctx, guid, doc)
		took = append(took, time.Since(start))
		require.NoError(b, err)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "import-ms-median")
	b.ReportMetric(float64(len(doc))/1024, "KiB-doc")
}
