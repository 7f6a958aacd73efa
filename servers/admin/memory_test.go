package admin_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/servers/internal/heaptest"
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
