package fax

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxwebhooks"
	"github.com/apistack/apistack/servers/fax/internal/pdflimit"
	"github.com/apistack/apistack/servers/fax/internal/pdftest"
	"github.com/apistack/apistack/servers/internal/heaptest"
)

func TestSend_APDFBombFailsTheFaxInBoundedMemoryAndOthersGoThrough(t *testing.T) {
	h, r := newReceivingHarness(t)
	// Four object streams of 256 MiB of spaces each: about 6.5 MB on the wire.
	bomb := pdftest.Bomb(4, 256<<20)
	require.Less(t, len(bomb), MaxMediaBytes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(bomb)
	}))
	t.Cleanup(srv.Close)

	stop := heaptest.Peak()
	start := time.Now()
	bombID := h.sendDoc("+14155550123", srv.URL+"/bomb.pdf", false)
	normalID := h.send("+14155550124")
	evs := r.waitFor(bombID, "fax.failed")
	elapsed := time.Since(start)
	peak := stop()
	r.waitFor(normalID, "fax.delivered")

	assert.Equal(t, faxwebhooks.FaxFailureReasonFileFormatInvalid, evs[len(evs)-1].Value.(faxwebhooks.FaxFailedEvent).Payload.FailureReason)
	t.Logf("PDF bomb (%d bytes, 4 x 256 MiB inflated): failed in %v, peak heap growth %.1f MiB", len(bomb), elapsed, float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(64<<20), "refusing the bomb costs under 64 MiB of heap")

	got, err := h.api.ListFaxesWithResponse(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, got.JSON200.Data, 2)
}

// countMeasured counts doc's pages, which must succeed, and returns the
// time it took and the heap's peak growth meanwhile.
func countMeasured(t *testing.T, doc []byte) (pages int, elapsed time.Duration, peak uint64) {
	t.Helper()
	stop := heaptest.Peak()
	start := time.Now()
	pages, err := CountPages(doc)
	elapsed = time.Since(start)
	peak = stop()
	require.NoError(t, err)
	return pages, elapsed, peak
}

func TestCountPages_ADocumentJustUnderTheDecodeBudgetIsCountedInBoundedMemory(t *testing.T) {
	// Four object streams of 7 MiB: 28 MiB decoded, under MaxDecodedBytes.
	n, elapsed, peak := countMeasured(t, pdftest.Bomb(4, 7<<20))
	assert.Equal(t, 4, n)
	t.Logf("a document decoding to 28 MiB: counted in %v, peak heap growth %.1f MiB", elapsed, float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(4*MaxDecodedBytes), "at most four times the decode budget")
}

func TestCountPages_ObjectsAreBounded(t *testing.T) {
	// n pages are n+2 objects and n+3 cross-reference entries: at the limit,
	// counted (and refused later for its pages).
	atLimit := makePDF(MaxObjects - 3)
	n, elapsed, peak := countMeasured(t, atLimit)
	assert.Equal(t, MaxObjects-3, n)
	t.Logf("a document of %d objects (%.1f MB): counted in %v, peak heap growth %.1f MiB", MaxObjects, float64(len(atLimit))/1e6, elapsed, float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(4*MaxDecodedBytes), "at most four times the decode budget")

	_, err := CountPages(makePDF(MaxObjects - 2))
	assert.ErrorIs(t, err, pdflimit.ErrLimit, "one object more is refused before the library reads it")
}
