package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/servers/internal/heaptest"
	"github.com/apistack/apistack/servers/restaurant"
)

// largeImport is a restaurant configuration of about size bytes of menu
// items whose last one refers to an option group that exists nowhere: the
// whole document is read and decoded, then refused (400), nothing written.
func largeImport(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"menuItems":[`)
	for i := 0; b.Len() < size-300; i++ {
		fmt.Fprintf(&b, `{"guid":"%s","entityType":"MenuItem","name":"Item %d of the large menu"},`, uuid.NewString(), i)
	}
	fmt.Fprintf(&b, `{"guid":"%s","entityType":"MenuItem","name":"Ghost","optionGroups":[{"guid":"%s","entityType":"MenuOptionGroup"}]}]}`, uuid.NewString(), uuid.NewString())
	return b.Bytes()
}

// BenchmarkImportLargestConfiguration sends a 30 MiB restaurant
// configuration import (the admin API's largest JSON body; the limit is 32
// MiB) per iteration and reports the peak heap growth while it is read,
// validated and refused, MiB-peak: what the largest authenticated JSON body
// costs.
func BenchmarkImportLargestConfiguration(b *testing.B) {
	env := startRestaurantAdminTB(b)
	ctx := context.Background()
	guid := uuid.NewString()
	created, err := env.api.CreateRestaurantWithResponse(ctx, adminapi.RestaurantCreateRequest{Guid: &guid, Name: "Large"})
	require.NoError(b, err)
	require.Equal(b, http.StatusCreated, created.StatusCode())
	doc := largeImport(30 << 20)
	var peaks []uint64
	for b.Loop() {
		peaks = append(peaks, heaptest.During(func() {
			resp, err := env.api.ImportRestaurantConfigurationWithBodyWithResponse(ctx, guid, "application/json", bytes.NewReader(doc))
			require.NoError(b, err)
			require.Equal(b, http.StatusBadRequest, resp.StatusCode(), string(resp.Body))
		}))
	}
	b.ReportMetric(float64(peaks[len(peaks)/2])/(1<<20), "MiB-peak")
	b.ReportMetric(float64(len(doc))/(1<<20), "MiB-body")
}

// demoImport is a realistic restaurant configuration (the demo generator's
// menus) of at least size bytes, encoded as an import document.
func demoImport(tb testing.TB, size int) []byte {
	tb.Helper()
	items := 1000
	for {
		doc, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: items, Seed: 7}))
		require.NoError(tb, err)
		if len(doc) >= size {
			return doc
		}
		items = int(float64(items)*float64(size)/float64(len(doc))) + 100
	}
}

// importPeak imports doc into a new restaurant of env and returns the peak
// heap growth while the server read, checked and wrote it.
func importPeak(tb testing.TB, env *restaurantAdmin, doc []byte) uint64 {
	tb.Helper()
	ctx := context.Background()
	guid := uuid.NewString()
	created, err := env.api.CreateRestaurantWithResponse(ctx, adminapi.RestaurantCreateRequest{Guid: &guid, Name: "Demo"})
	require.NoError(tb, err)
	require.Equal(tb, http.StatusCreated, created.StatusCode())
	return heaptest.During(func() {
		resp, err := env.api.ImportRestaurantConfigurationWithBodyWithResponse(ctx, guid, "application/json", bytes.NewReader(doc))
		require.NoError(tb, err)
		require.Equal(tb, http.StatusOK, resp.StatusCode(), string(resp.Body))
	})
}

// BenchmarkImportDemoConfiguration imports a realistic 30 MiB configuration
// (the demo generator's menus) into a new restaurant per iteration and
// reports the peak heap growth while it is read, checked and written,
// MiB-peak. The document itself (held by the client) is outside the
// measure: it is built before.
func BenchmarkImportDemoConfiguration(b *testing.B) {
	env := startRestaurantAdminTB(b)
	doc := demoImport(b, 30<<20)
	var peaks []uint64
	for b.Loop() {
		peaks = append(peaks, importPeak(b, env, doc))
	}
	slices.Sort(peaks)
	b.ReportMetric(float64(peaks[len(peaks)/2])/(1<<20), "MiB-peak")
	b.ReportMetric(float64(len(doc))/(1<<20), "MiB-body")
}
