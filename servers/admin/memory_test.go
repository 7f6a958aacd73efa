package admin_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
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

// peakHeap runs f while sampling the heap and returns the peak growth of
// HeapInuse.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return peak - base
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
		peaks = append(peaks, peakHeap(func() {
			resp, err := env.api.ImportRestaurantConfigurationWithBodyWithResponse(ctx, guid, "application/json", bytes.NewReader(doc))
			require.NoError(b, err)
			require.Equal(b, http.StatusBadRequest, resp.StatusCode(), string(resp.Body))
		}))
	}
	b.ReportMetric(float64(peaks[len(peaks)/2])/(1<<20), "MiB-peak")
	b.ReportMetric(float64(len(doc))/(1<<20), "MiB-body")
}
