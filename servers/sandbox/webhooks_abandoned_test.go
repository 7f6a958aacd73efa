package sandbox_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/sandboxapi"
)

// An event whose every try fails is abandoned: the log's attempts of it then
// carry the event abandoned, with when, and it leaves the pending list. The
// sandbox's clock moves the retries on (each wait is at most 1.5 times the
// longest backoff, a minute).
func TestSandboxWebhooks_AnEventEveryTryOfWhichFailsIsAbandoned(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a := e.create(t, sandboxapi.CreateSandboxRequest{})
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(target.Close)
	// The target is on loopback: allowed as `serve --fax-allow-destination` would.
	require.NoError(t, e.st.Fax.AllowDestinations(target.URL+"/hooks"))
	_, err := a.fax.UpdateApplication(ctx, a.Credentials.Fax.ConnectionId, faxapi.UpdateFaxApplicationJSONRequestBody{WebhookUrl: ptr(target.URL + "/hooks")})
	require.NoError(t, err)
	f := e.sendFax(t, a, "+13125550800")

	abandoned := func(p *sandboxapi.WebhookLogPage) *sandboxapi.WebhookAttempt {
		for i, at := range p.Data {
			if at.Event.FaxId == f.ID.String() && at.Event.Type == "fax.queued" && at.Event.State == sandboxapi.WebhookEventStateAbandoned {
				return &p.Data[i]
			}
		}
		return nil
	}
	sawPending := false
	var page *sandboxapi.WebhookLogPage
	require.Eventually(t, func() bool {
		page = webhookLog(t, a, 0)
		for _, ev := range page.Pending {
			if ev.FaxId == f.ID.String() && ev.Type == "fax.queued" {
				sawPending = true
				assert.Equal(t, sandboxapi.WebhookEventStatePending, ev.State)
			}
		}
		if abandoned(page) != nil {
			return true
		}
		e.clock.Advance(2 * time.Minute)
		return false
	}, 30*time.Second, 5*time.Millisecond, "fax.queued of %s never abandoned", f.ID)
	assert.True(t, sawPending, "the event was pending while it was retried")

	at := abandoned(page)
	require.NotNil(t, at.Event.AbandonedAt, "an abandoned event says when")
	assert.Nil(t, at.Event.DeliveredAt)
	assert.Equal(t, 5, at.Event.Attempts, "every try of the webhook URL (no failover URL)")
	assert.False(t, at.Event.AbandonedAt.Before(at.AttemptedAt), "abandoned after its last try")
	assert.GreaterOrEqual(t, int(hits.Load()), 5)
	for _, ev := range page.Pending {
		assert.NotEqual(t, at.Event.Seq, ev.Seq, "an abandoned event is not pending any more")
	}
}
