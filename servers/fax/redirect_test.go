package fax

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDelivery_ARedirectIsNotAnAcknowledgementAndIsNotFollowed(t *testing.T) {
	// A plain client: the contract transport would refuse the 302 itself.
	h := newHarness(t, func(c *Config) { c.WebhookTransport = nil })
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("GET /elsewhere", func(w http.ResponseWriter, _ *http.Request) {
		followed.Add(1)
		w.WriteHeader(http.StatusOK)
	})
	redirecting := httptest.NewServer(mux)
	t.Cleanup(redirecting.Close)
	failover := newReceiver(t, h)
	h.useReceivers(redirecting.URL+"/", failover.url)

	id := h.send("+14155550123")
	evs := failover.waitFor(id, "fax.delivered")
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, failover.typesOf(id),
		"a 302 is not a 2xx: every event goes on to the failover URL")
	assert.Equal(t, 4, evs[0].Attempt, "three attempts on the redirecting URL, then the failover")
	assert.Zero(t, followed.Load(), "the sender never follows a redirect")
}
