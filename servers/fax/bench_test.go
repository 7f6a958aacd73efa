package fax

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/internal/clock"
)

// BenchmarkWebhookThroughput commits 10,000 events (1,000 faxes of 10 events)
// to the outbox in transactions of 500 and measures their delivery to a local
// receiver that verifies every signature (clients/fax's handler): events per
// second, and the p50/p99 time from commit to receipt.
func BenchmarkWebhookThroughput(b *testing.B) {
	const faxes, perFax, txSize = 1000, 10, 500
	const total = faxes * perFax
	h := newHarness(b, func(c *Config) {
		c.Clock = clock.System{}
		c.WebhookClient = nil // no contract validation: measure the sender
		c.ValidateResponses = false
	})
	ctx := context.Background()

	var mu sync.Mutex
	committed := make(map[string]time.Time, total)
	received := make(map[string]time.Time, total)
	done := make(chan struct{})
	handler, err := faxclient.NewWebhookHandler(h.srv.WebhookPublicKey(), func(_ context.Context, e faxclient.Event) error {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, dup := received[e.ID]; !dup {
			received[e.ID] = now
			if len(received) == total {
				close(done)
			}
		}
		return nil
	})
	require.NoError(b, err)
	r := newBenchReceiver(b, handler)

	// Build the events first, so the clock runs only while they flow.
	batches := make([][]outboxEvent, 0, total/txSize)
	var batch []outboxEvent
	for range faxes {
		f := faxRow{ID: uuid.NewString(), AccountID: h.acct, ConnectionID: h.app, Direction: "outbound",
			From: h.from, To: "+14155550123", Status: string(faxapi.FaxStatusQueued), WebhookURL: r}
		for range perFax {
			ev, err := h.srv.newEvent(f, eventQueued, time.Now())
			require.NoError(b, err)
			batch = append(batch, ev)
			if len(batch) == txSize {
				batches, batch = append(batches, batch), nil
			}
		}
	}

	b.ResetTimer()
	start := time.Now()
	for _, evs := range batches {
		tx, err := h.srv.store.db.BeginTx(ctx, nil)
		require.NoError(b, err)
		_, err = insertEvents(ctx, tx, evs)
		require.NoError(b, err)
		require.NoError(b, tx.Commit())
		at := time.Now()
		mu.Lock()
		for _, e := range evs {
			committed[e.EventID] = at
		}
		mu.Unlock()
		h.srv.wakeDelivery()
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("only %d of %d events arrived", len(received), total)
	}
	elapsed := time.Since(start)
	b.StopTimer()

	mu.Lock()
	lat := make([]time.Duration, 0, total)
	for id, at := range received {
		lat = append(lat, at.Sub(committed[id]))
	}
	mu.Unlock()
	slices.Sort(lat)
	b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// newBenchReceiver serves handler on loopback and returns its URL.
func newBenchReceiver(b *testing.B, handler http.Handler) string {
	srv := httptest.NewServer(handler)
	b.Cleanup(srv.Close)
	return srv.URL + "/"
}
