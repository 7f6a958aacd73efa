package fax

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
)

// TestTelemetry_AFaxFlowMovesTheCounters sends a fax through the generated
// client while its webhook URL refuses connections and the failover receiver
// answers 500 twice, and reads what /metrics and the request log say.
func TestTelemetry_AFaxFlowMovesTheCounters(t *testing.T) {
	log := requestlog.New(0)
	tel := telemetry.New(log)
	h := newHarness(t, func(c *Config) { c.Telemetry = tel })
	scrape := func() telemetrytest.Families {
		t.Helper()
		return telemetrytest.ScrapeHandler(t, tel.Handler())
	}

	failover := newReceiver(t, h)
	h.useReceivers("http://127.0.0.1:9/", failover.url) // port 9 (discard) refuses connections
	failover.failFirst("fax.queued", 2)
	id := h.send("+14155550123")
	evs := failover.waitFor(id, "fax.delivered")
	require.Len(t, evs, 4)

	// The outcomes are recorded in batches after the deliveries: the outbox
	// empties once they are.
	require.Eventually(t, func() bool {
		return scrape().Value("apistack_fax_webhook_outbox_depth", nil) == 0
	}, 10*time.Second, 10*time.Millisecond)
	f := scrape()
	attempts := func(outcome string) float64 {
		return f.Value("apistack_fax_webhook_attempts_total", map[string]string{"outcome": outcome})
	}
	assert.Equal(t, 4.0, attempts(telemetry.OutcomeDelivered), "each event delivered once")
	assert.Equal(t, 2.0, attempts(telemetry.OutcomeRefused), "the failover's two 500s")
	assert.Equal(t, 12.0, attempts(telemetry.OutcomeError), "three refused connections per event on the webhook URL")
	steps := func(status string) float64 {
		return f.Value("apistack_fax_simulator_steps_total", map[string]string{"status": status})
	}
	for _, status := range []string{"media.processed", "originated", "delivered"} {
		assert.Equal(t, 1.0, steps(status), status)
	}
	assert.GreaterOrEqual(t, steps("sending"), 1.0)
	assert.Equal(t, 1.0, f.Value("apistack_http_requests_total", map[string]string{"api": "fax", "operation": "SendFax", "status": "202"}))
	assert.Equal(t, 1.0, f.Value("apistack_http_request_duration_seconds", map[string]string{"api": "fax", "operation": "SendFax"}))

	sends := log.Recent(requestlog.Filter{API: "fax", Operation: "SendFax"})
	require.Len(t, sends, 1)
	assert.Equal(t, http.StatusAccepted, sends[0].Status)
	assert.Equal(t, "/v2/faxes", sends[0].Path)
	assert.Equal(t, http.MethodPost, sends[0].Method)
	assert.Positive(t, sends[0].Latency)

	// While a receiver holds an event, it waits in the outbox.
	entered, release := make(chan struct{}, 8), make(chan struct{})
	failover.setBehaviour(func(faxwebhook.Event) error {
		entered <- struct{}{}
		<-release
		return nil
	})
	h.useReceivers(failover.url, "")
	second := h.send("+14155550123")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the second fax's first event never reached the receiver")
	}
	assert.GreaterOrEqual(t, scrape().Value("apistack_fax_webhook_outbox_depth", nil), 1.0)
	close(release)
	failover.waitFor(second, "fax.delivered")
	require.Eventually(t, func() bool {
		return scrape().Value("apistack_fax_webhook_outbox_depth", nil) == 0
	}, 10*time.Second, 10*time.Millisecond)

	h.stop()
	assert.True(t, math.IsNaN(scrape().Value("apistack_fax_webhook_outbox_depth", nil)),
		"a closed database reads as NaN, never as a stale count")
}
