package sandbox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/stack"
)

// triggerInbound makes a fax arrive at b's number and returns its id.
func triggerInbound(t testing.TB, b *box, body sandboxapi.InboundFaxRequest) string {
	t.Helper()
	resp, err := b.api.TriggerInboundFaxWithResponse(context.Background(), b.Id, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode(), string(resp.Body))
	return resp.JSON201.FaxId.String()
}

// inboxUntil moves the stack's clock and b's a second at a time until the
// receiver of b (receive) holds the event of type last of fax id, and returns that fax's
// deliveries in the order they arrived.
func (e *env) inboxUntil(t testing.TB, b *box, id, last string) []stack.InboxEvent {
	t.Helper()
	var got []stack.InboxEvent
	require.Eventually(t, func() bool {
		got = got[:0]
		done := false
		for _, ev := range b.inbox.List() {
			if ev.FaxID == id {
				got = append(got, ev)
				done = done || ev.EventType == last
			}
		}
		if !done {
			e.clock.Advance(time.Second)
			// The advance commits the new time first; it then waits for the
			// deliveries due, which a retry waiting on the sandbox's clock
			// may hold (sbx-clock x sbx-faults, reported): it is not waited
			// for past a few seconds.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			resp, err := b.api.AdvanceSandboxClockWithResponse(ctx, b.Id, sandboxapi.ClockChange{Advance: ptr("1s")})
			cancel()
			if err == nil && resp.StatusCode() != http.StatusOK {
				t.Errorf("advance the clock of %s: %d %s", b.Id, resp.StatusCode(), resp.Body)
			}
		}
		return done
	}, 20*time.Second, 10*time.Millisecond, "fax %s: no %s in the inbox", id, last)
	return got
}

func types(events []stack.InboxEvent) []string {
	out := make([]string, 0, len(events))
	for _, ev := range events {
		out = append(out, ev.EventType)
	}
	return out
}

func TestTriggers_InboundFaxArrivesWithItsEvents(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	e.receive(t, b)
	resp, err := b.api.TriggerInboundFaxWithResponse(ctx, b.Id, sandboxapi.InboundFaxRequest{Pages: ptr(3)})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode(), string(resp.Body))
	in := resp.JSON201
	assert.Equal(t, b.Credentials.Fax.From, in.To, "the sandbox's number by default")
	assert.Equal(t, "+14155550123", in.From)
	assert.Equal(t, 3, in.PageCount)
	id := in.FaxId.String()

	f, err := b.fax.GetFax(ctx, id)
	require.NoError(t, err, "the sandbox's own key sees the fax")
	assert.Equal(t, faxapi.FaxDirectionInbound, faxapi.FaxDirection(f.Direction))
	events := e.inboxUntil(t, b, id, "fax.received")
	assert.Equal(t, []string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, types(events))
	f, err = b.fax.GetFax(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, faxapi.FaxStatusReceived, faxapi.FaxStatus(f.Status))

	// Another sandbox's key does not see it; a failed call is a failed fax.
	other := e.create(t, sandboxapi.CreateSandboxRequest{})
	_, err = other.fax.GetFax(ctx, id)
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	failed := triggerInbound(t, b, sandboxapi.InboundFaxRequest{From: ptr("+13125550199"),
		Outcome: ptr(sandboxapi.InboundFaxRequestOutcomeFailed)})
	assert.Contains(t, types(e.inboxUntil(t, b, failed, "fax.failed")), "fax.failed")

	// Bad triggers answer 400 and make no fax: another sandbox's number,
	// a document that is no PDF, a document and pages together.
	for _, body := range []string{
		`{"to":"` + other.Credentials.Fax.From + `"}`,
		`{"document":"` + "bm90IGEgcGRm" + `"}`,
		`{"document":"` + "bm90IGEgcGRm" + `","pages":2}`,
		`{"pages":0}`,
		`{"from":"12345"}`,
	} {
		r, err := b.api.TriggerInboundFaxWithBodyWithResponse(ctx, b.Id, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, r.StatusCode(), "%s: %s", body, r.Body)
	}
	n := 0
	for _, err := range b.fax.ListFaxes(ctx, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 2, n, "only the two good triggers made faxes")
	// Another sandbox's token cannot trigger into b.
	r, err := other.api.TriggerInboundFaxWithResponse(ctx, b.Id, sandboxapi.InboundFaxRequest{})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, r.StatusCode())
}

func TestFaults_WebhookDeliveriesFailDuplicateAndReorder(t *testing.T) {
	e := start(t, envOptions{})
	a := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	b := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	e.receive(t, a)
	e.receive(t, b)

	// The first attempt of the next event fails, as a receiver's 503: the
	// event comes again, attempt 2.
	addFault(t, a, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindWebhookFail, Count: ptr(1)})
	id := triggerInbound(t, a, sandboxapi.InboundFaxRequest{})
	events := e.inboxUntil(t, a, id, "fax.received")
	assert.Equal(t, []string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, types(events))
	assert.Equal(t, 2, events[0].Attempt, "the first attempt failed")
	assert.Equal(t, 1, events[1].Attempt)
	assert.Equal(t, 1, listFaults(t, a)[0].Taken)
	// B's deliveries meanwhile: untouched.
	idB := triggerInbound(t, b, sandboxapi.InboundFaxRequest{})
	eventsB := e.inboxUntil(t, b, idB, "fax.received")
	assert.Equal(t, []string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, types(eventsB))
	for _, ev := range eventsB {
		assert.Equal(t, 1, ev.Attempt)
	}
	clearFaults(t, a)

	// Duplicated: the next delivery comes twice, the same event.
	addFault(t, a, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindWebhookDuplicate, Count: ptr(1)})
	id = triggerInbound(t, a, sandboxapi.InboundFaxRequest{})
	events = e.inboxUntil(t, a, id, "fax.received")
	assert.Equal(t, []string{"fax.receiving.started", "fax.receiving.started", "fax.media.processing.started", "fax.received"}, types(events))
	assert.Equal(t, events[0].ID, events[1].ID)
	clearFaults(t, a)

	// Reordered: the next delivery comes after the one that follows it.
	addFault(t, a, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindWebhookReorder, Count: ptr(1)})
	id = triggerInbound(t, a, sandboxapi.InboundFaxRequest{})
	events = e.inboxUntil(t, a, id, "fax.received")
	assert.Equal(t, []string{"fax.media.processing.started", "fax.receiving.started", "fax.received"}, types(events))
	assert.Equal(t, 1, listFaults(t, a)[0].Taken)
}
