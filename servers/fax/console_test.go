package fax

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consoleEvent returns the fax's event of type typ (the first, or the
// redelivery when redelivery is set) once it is no longer pending.
func consoleEvent(t *testing.T, h *harness, faxID, typ string, redelivery bool) WebhookEvent {
	t.Helper()
	var found WebhookEvent
	require.Eventually(t, func() bool {
		f, err := h.srv.Console().Fax(context.Background(), faxID)
		require.NoError(t, err)
		for _, e := range f.Events {
			if e.Type == typ && (e.RedeliveryOf != 0) == redelivery && e.State() != "pending" {
				found = e
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	return found
}

func TestConsole_RecordsEveryAttemptAndRedelivers(t *testing.T) {
	h := newHarness(t)
	r := newReceiver(t, h)
	h.useReceivers(r.url+"?token=receiver-secret", "")
	r.failFirst("fax.queued", 2)
	id := h.send("+14155550123")
	r.waitFor(id, "fax.delivered")

	queued := consoleEvent(t, h, id, "fax.queued", false)
	require.Len(t, queued.AttemptLog, 3)
	for i, a := range queued.AttemptLog {
		assert.Equal(t, i+1, a.Attempt)
		assert.Equal(t, r.url, a.Target, "the target is shown without its query")
		assert.NotContains(t, a.Target, "receiver-secret")
		assert.NotEmpty(t, a.Headers[HeaderSignature])
		assert.NotEmpty(t, a.Headers[HeaderTimestamp])
	}
	for _, a := range queued.AttemptLog[:2] {
		assert.False(t, a.Succeeded)
		assert.Equal(t, 500, a.StatusCode)
		assert.Contains(t, a.Error, "500")
		require.NotNil(t, a.NextRetry, "a failed attempt that will be retried has its next retry")
		assert.False(t, a.NextRetry.Before(a.At))
	}
	last := queued.AttemptLog[2]
	assert.True(t, last.Succeeded)
	assert.Equal(t, 204, last.StatusCode, "the receiver acknowledges with 204")
	assert.Nil(t, last.NextRetry)
	assert.Equal(t, r.url, queued.DeliveredTo)

	f, err := h.srv.Console().Fax(context.Background(), id)
	require.NoError(t, err)
	var states []string
	for _, tr := range f.Timeline {
		states = append(states, tr.Status)
	}
	assert.Equal(t, []string{"queued", "media.processed", "sending", "delivered"}, states)
	assert.True(t, f.Final)

	before := len(r.eventsOf(id))
	newSeq, err := h.srv.Console().Redeliver(context.Background(), queued.Seq)
	require.NoError(t, err)
	assert.Greater(t, newSeq, queued.Seq)
	again := consoleEvent(t, h, id, "fax.queued", true)
	assert.Equal(t, queued.Seq, again.RedeliveryOf)
	assert.Equal(t, queued.EventID, again.EventID, "a redelivery carries the same event")
	require.Len(t, again.AttemptLog, 1)
	assert.Equal(t, 4, again.AttemptLog[0].Attempt, "attempt numbers continue")
	assert.True(t, again.AttemptLog[0].Succeeded)
	require.Eventually(t, func() bool { return len(r.eventsOf(id)) == before+1 }, 10*time.Second, 5*time.Millisecond)
	evs := r.eventsOf(id)
	assert.Equal(t, queued.EventID, evs[len(evs)-1].ID)

	_, err = h.srv.Console().Redeliver(context.Background(), 1<<40)
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestConsole_AbandonedAttemptHasNoNextRetryAndAccountsList(t *testing.T) {
	h := newHarness(t)
	h.useReceivers("http://127.0.0.1:9/", "") // refuses connections
	id := h.send("+14155550123")
	queued := consoleEvent(t, h, id, "fax.queued", false)
	assert.Equal(t, "abandoned", queued.State())
	require.Len(t, queued.AttemptLog, 3)
	assert.NotNil(t, queued.AttemptLog[1].NextRetry)
	assert.Nil(t, queued.AttemptLog[2].NextRetry, "the last try on the URL is not retried")
	assert.Zero(t, queued.AttemptLog[2].StatusCode)
	assert.NotEmpty(t, queued.AttemptLog[2].Error)

	accounts, err := h.srv.Console().Accounts(context.Background())
	require.NoError(t, err)
	require.Len(t, accounts, 1)
	assert.Equal(t, "acme", accounts[0].Name)
	faxes, err := h.srv.Console().Faxes(context.Background(), accounts[0].ID, 10)
	require.NoError(t, err)
	require.Len(t, faxes, 1)
	assert.Equal(t, id, faxes[0].ID)
}
