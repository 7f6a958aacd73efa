package sandbox_test

// Tests of the sandbox's parts together: clock, faults, journal, webhook
// log and reset.

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
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

// sendFaxEntry is the journal's entry of b's one SendFax.
func sendFaxEntry(t testing.TB, b *box) sandboxapi.JournalEntry {
	t.Helper()
	entries := journal(t, b, &sandboxapi.ListSandboxRequestsParams{Operation: ptr("SendFax")})
	require.Len(t, entries, 1, label(b))
	return entries[0]
}

// inboxOnly checks that every attempt of b's log is of one of b's faxes,
// went to b's own inbox and was accepted there (its signature verified).
func (e *env) inboxOnly(t testing.TB, b *box, page *sandboxapi.WebhookLogPage, faxIDs ...string) {
	t.Helper()
	for _, a := range page.Data {
		assert.Contains(t, faxIDs, a.Event.FaxId, "%s: an event of another fax in its log", label(b))
		assert.Equal(t, e.urls[stack.Admin]+sandbox.InboxPathOf(b.Id), a.Target, label(b))
		assert.True(t, a.Succeeded, "%s: attempt %d of %s: status %d, error %q", label(b), a.Attempt, a.Event.Type,
			deref(a.StatusCode), deref(a.Error))
		e.verify(t, b, a)
	}
}

func TestSandboxes_AFrozenSandboxHoursAheadDeliversToItsInboxAndJournalsBothTimes(t *testing.T) {
	e := start(t, envOptions{})
	a := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	ahead := advance(t, a, "5h")
	require.Equal(t, "5h0m0s", ahead.Offset)

	f := e.sendFax(t, a, "+13125550800")
	assert.Equal(t, ahead.Now, f.CreatedAt, "the fax is made in the sandbox's time")
	advance(t, a, "10m")
	assert.Equal(t, faxapi.FaxStatusDelivered, faxStatus(t, a, f.ID.String()))
	// Every event went to the sandbox's inbox, signed with the stack's time
	// (a receiver's clock is wall time), and verified there.
	page := webhookLog(t, a, 0)
	require.True(t, delivered(f.ID.String(), "fax.delivered")(page), "the delivered event is not in the log: %+v", page)
	assert.Empty(t, page.Pending)
	e.inboxOnly(t, a, page, f.ID.String())

	// The journal shows the request at both times.
	en := sendFaxEntry(t, a)
	assert.Equal(t, e.clock.Now().UTC().Truncate(time.Microsecond), en.Time.UTC(), "time is the stack's (wall) time")
	assert.Equal(t, ahead.Now, en.SandboxTime.UTC(), "sandbox_time is the sandbox's")

	// A real sandbox with an offset runs at wall time plus its offset, and
	// journals that.
	r := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeReal)})
	advance(t, r, "2h")
	e.clock.Advance(30 * time.Second)
	c := clockOf(t, r)
	assert.Equal(t, e.clock.Now().Add(2*time.Hour).UTC().Truncate(time.Microsecond), c.Now.UTC())
	fr := e.sendFax(t, r, "+13125550800")
	assert.Equal(t, c.Now.UTC(), fr.CreatedAt.UTC())
	en = sendFaxEntry(t, r)
	assert.Equal(t, 2*time.Hour, en.SandboxTime.Sub(en.Time))
	// Its fax is delivered by the stack's own work as time passes, with no
	// advance.
	page = e.driveUntil(t, r, "the real sandbox's fax delivered", delivered(fr.ID.String(), "fax.delivered"))
	e.inboxOnly(t, r, page, fr.ID.String())
}

func TestSandboxes_ResetBringsEveryPartBackToRightAfterCreation(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	b := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	for _, x := range []*box{a, b} {
		e.use(t, x)
		addFault(t, x, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindUnavailable, Api: apiOf("fax"), Operation: ptr("ListFaxes")})
		advance(t, x, "3h")
		require.NotEmpty(t, webhookLog(t, x, 0).Data, label(x))
		require.NotEmpty(t, journal(t, x, nil), label(x))
	}
	e.clock.Advance(time.Minute)
	bClock := clockOf(t, b)

	resp, err := a.api.ResetSandboxWithResponse(ctx, a.Id)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	// The clock as a new sandbox's: frozen, at the stack's time, no offset.
	c := clockOf(t, a)
	assert.Equal(t, sandboxapi.ClockModeFrozen, c.Mode)
	assert.Equal(t, "0s", c.Offset)
	assert.Equal(t, e.clock.Now().UTC().Truncate(time.Microsecond), c.Now.UTC())
	assert.Equal(t, c.Now, resp.JSON200.Now)
	// No faults, an empty webhook log and journal.
	assert.Empty(t, listFaults(t, a))
	page := webhookLog(t, a, 0)
	assert.Empty(t, page.Data)
	assert.Empty(t, page.Pending)
	assert.Empty(t, journal(t, a, nil))
	// It works as a new one: ListFaxes answers (no fault), with no faxes; a
	// fax is made at the clock's time and stays queued until an advance.
	for _, err := range a.fax.ListFaxes(ctx, nil) {
		require.NoError(t, err)
		t.Fatal("a fax survived the reset")
	}
	f := e.sendFax(t, a, "+13125550800")
	assert.Equal(t, c.Now.UTC(), f.CreatedAt.UTC())
	assert.Equal(t, faxapi.FaxStatusQueued, faxStatus(t, a, f.ID.String()))
	advance(t, a, "10m")
	assert.Equal(t, faxapi.FaxStatusDelivered, faxStatus(t, a, f.ID.String()))
	e.inboxOnly(t, a, webhookLog(t, a, 0), f.ID.String())

	// B kept everything.
	assert.Equal(t, bClock, clockOf(t, b))
	require.Len(t, listFaults(t, b), 1)
	assert.NotEmpty(t, webhookLog(t, b, 0).Data)
	ops := []string{}
	for _, en := range journal(t, b, nil) {
		ops = append(ops, en.Operation)
	}
	assert.Contains(t, strings.Join(ops, ","), "SendFax")
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
