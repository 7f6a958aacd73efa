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
)

// advance moves b's clock by d through its own token and returns the clock.
func advance(t testing.TB, b *box, d string) sandboxapi.SandboxClock {
	t.Helper()
	resp, err := b.api.AdvanceSandboxClockWithResponse(context.Background(), b.Id, sandboxapi.ClockChange{Advance: &d})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	return *resp.JSON200
}

// clockOf reads b's clock through its own token.
func clockOf(t testing.TB, b *box) sandboxapi.SandboxClock {
	t.Helper()
	resp, err := b.api.GetSandboxClockWithResponse(context.Background(), b.Id)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	return *resp.JSON200
}

// faxStatus reads a fax's status through b's fax client.
func faxStatus(t testing.TB, b *box, id string) faxapi.FaxStatus {
	t.Helper()
	f, err := b.fax.GetFax(context.Background(), id)
	require.NoError(t, err)
	return f.Status
}

// inboxTypes lists the event types the stack's inbox received for a fax.
func (e *env) inboxTypes(faxID string) []string {
	var out []string
	for _, ev := range e.st.Inbox.List() {
		if ev.FaxID == faxID {
			out = append(out, ev.EventType)
		}
	}
	return out
}

func TestSandboxClock_AdvanceDeliversOneSandboxsFaxOnly(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	b := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	startA, startB := clockOf(t, a), clockOf(t, b)
	assert.Equal(t, sandboxapi.ClockModeFrozen, startA.Mode)
	assert.WithinDuration(t, e.clock.Now(), startA.Now, time.Second)
	assert.Equal(t, startA.Now, a.Now, "the sandbox shows its time")
	faxA := e.sendFax(t, a, "+13125550800")
	faxB := e.sendFax(t, b, "+13125550800")
	assert.Equal(t, startA.Now, faxA.CreatedAt, "a fax is made at its sandbox's time")

	require.Eventually(t, func() bool { return len(e.inboxTypes(faxB.ID.String())) == 1 }, 10*time.Second, 5*time.Millisecond,
		"B's fax.queued went out at the send")

	// The stack's time passing moves neither frozen sandbox.
	stackBefore := e.clock.Now()
	e.clock.Advance(time.Minute)
	assert.Equal(t, startA.Now, clockOf(t, a).Now)

	got := advance(t, a, "10m")
	assert.Equal(t, sandboxapi.ClockModeFrozen, got.Mode)
	assert.Equal(t, startA.Now.Add(10*time.Minute), got.Now)
	assert.Equal(t, "9m0s", got.Offset, "10 minutes ahead of its start, the stack went on by one")

	// When the advance answered, A's fax was delivered, every event in the inbox.
	f, err := a.fax.GetFax(ctx, faxA.ID.String())
	require.NoError(t, err)
	assert.Equal(t, faxapi.FaxStatusDelivered, f.Status)
	assert.True(t, f.UpdatedAt.After(startA.Now.Add(time.Second)) && !f.UpdatedAt.After(got.Now),
		"the fax's steps were taken in A's time: updated %s", f.UpdatedAt)
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, e.inboxTypes(faxA.ID.String()))

	// B did not move: its fax is queued, only its fax.queued went out (at
	// the send).
	assert.Equal(t, startB.Now, clockOf(t, b).Now)
	assert.Equal(t, faxapi.FaxStatusQueued, faxStatus(t, b, faxB.ID.String()))
	assert.Equal(t, []string{"fax.queued"}, e.inboxTypes(faxB.ID.String()))
	// Nor did the stack.
	assert.Equal(t, stackBefore.Add(time.Minute), e.clock.Now())

	// A's GetSandbox shows its time; B's advance by 0s runs B's due work.
	resp, err := a.api.GetSandboxWithResponse(ctx, a.Id)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	assert.Equal(t, got.Now, resp.JSON200.Now)
	advance(t, b, "0s")
	assert.Equal(t, faxapi.FaxStatusMediaProcessed, faxStatus(t, b, faxB.ID.String()))
	assert.Equal(t, []string{"fax.queued", "fax.media.processed"}, e.inboxTypes(faxB.ID.String()))
	assert.Equal(t, faxapi.FaxStatusDelivered, faxStatus(t, a, faxA.ID.String()))
}

func TestSandboxClock_SetAndRealClocks(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	r := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeReal)})
	got := advance(t, r, "1h")
	assert.Equal(t, sandboxapi.ClockModeReal, got.Mode)
	assert.Equal(t, "1h0m0s", got.Offset)
	assert.WithinDuration(t, e.clock.Now().Add(time.Hour), got.Now, time.Millisecond)
	// A real clock runs on with the stack's time, its offset kept.
	e.clock.Advance(90 * time.Second)
	c := clockOf(t, r)
	assert.Equal(t, "1h0m0s", c.Offset)
	assert.WithinDuration(t, e.clock.Now().Add(time.Hour), c.Now, time.Millisecond)

	// Set moves a frozen clock to an instant.
	fz := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	to := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	resp, err := fz.api.AdvanceSandboxClockWithResponse(ctx, fz.Id, sandboxapi.ClockChange{Set: &to})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	assert.Equal(t, to, resp.JSON200.Now)
	assert.Equal(t, to, clockOf(t, fz).Now)
	// A fax sent now is made at that time.
	f := e.sendFax(t, fz, "+13125550800")
	assert.Equal(t, to, f.CreatedAt)
	assert.Equal(t, c.Now.Truncate(time.Hour), clockOf(t, r).Now.Truncate(time.Hour), "the real sandbox did not move")
}

func TestSandboxClock_RefusesBadChangesAndOtherTokens(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	b := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
	before := clockOf(t, a)
	past := before.Now.Add(-time.Second)
	for name, body := range map[string]string{
		"neither":           `{}`,
		"both":              `{"advance": "1m", "set": "2040-01-01T00:00:00Z"}`,
		"negative":          `{"advance": "-1m"}`,
		"not a Go duration": `{"advance": "ten minutes"}`,
		"days":              `{"advance": "1d"}`,
		"bad instant":       `{"set": "yesterday"}`,
		"backwards":         `{"set": "` + past.Format(time.RFC3339Nano) + `"}`,
		"unknown":           `{"advance": "1m", "speed": 2}`,
		"null":              `null`,
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := a.api.AdvanceSandboxClockWithBodyWithResponse(ctx, a.Id, "application/json", strings.NewReader(body))
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), string(resp.Body))
			require.NotNil(t, resp.JSON400, string(resp.Body))
			assert.NotEmpty(t, resp.JSON400.Message)
		})
	}
	assert.Equal(t, before.Now, clockOf(t, a).Now, "a refused change changed nothing")

	// Another sandbox's token sees no such sandbox; the creator's may not.
	d := "1m"
	resp, err := b.api.AdvanceSandboxClockWithResponse(ctx, a.Id, sandboxapi.ClockChange{Advance: &d})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode())
	get, err := b.api.GetSandboxClockWithResponse(ctx, a.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, get.StatusCode())
	resp, err = e.creator.AdvanceSandboxClockWithResponse(ctx, a.Id, sandboxapi.ClockChange{Advance: &d})
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode())
	assert.Equal(t, before.Now, clockOf(t, a).Now)
	// The admin token may.
	resp, err = e.admin.AdvanceSandboxClockWithResponse(ctx, a.Id, sandboxapi.ClockChange{Advance: &d})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	assert.Equal(t, before.Now.Add(time.Minute), resp.JSON200.Now)
}
