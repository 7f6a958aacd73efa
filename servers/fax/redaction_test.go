package fax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWebhooks_DeliveredToHidesTheURLsSecrets: the receiver's URL carries a
// password and a token; the body sent (which the webhook log keeps and
// shows) names the URL without them, keeping what says where it points.
func TestWebhooks_DeliveredToHidesTheURLsSecrets(t *testing.T) {
	h := newHarness(t)
	r := newReceiver(t, h)
	hostPort := strings.TrimSuffix(strings.TrimPrefix(r.url, "http://"), "/")
	h.useReceivers("http://hook:pa55word@"+hostPort+"/?tenant=7&token=t0ken-value#frag", "")

	id := h.send("+14155550123")
	evs := r.waitFor(id, "fax.delivered")
	for _, e := range evs {
		assert.Equal(t, "http://redacted@"+hostPort+"/?tenant=7&token=redacted", e.DeliveredTo, e.Type)
		assert.NotContains(t, e.DeliveredTo, "pa55word")
		assert.NotContains(t, e.DeliveredTo, "t0ken-value")
	}
}
