package sandbox_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/sandbox"
)

// The console's view of the sandboxes: every sandbox with its counts, clock
// and faults; one's journal filtered and its webhook log; its actions; and
// looking does not renew a sandbox's TTL.
func TestConsole_SandboxesJournalWebhooksAndActions(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	con := e.st.Sandboxes.Console()
	a, b := e.create(t, sandboxapi.CreateSandboxRequest{}), e.create(t, frozenClock)

	_, f := e.use(t, a)
	e.driveUntil(t, a, "fax.delivered", delivered(f.ID.String(), "fax.delivered"))
	addFault(t, a, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindInternalError, Api: apiOf("pam"), Count: ptr(3)})
	advance(t, a, "2h")
	journalLen, hooksLen := len(journal(t, a, nil)), len(webhookLog(t, a, 0).Data)
	resp, err := a.api.GetSandboxWithResponse(ctx, a.Id)
	used := testkit.Answered(t, http.StatusOK, resp, err).JSON200.LastUsedAt
	e.clock.Advance(time.Minute)

	list, err := con.Sandboxes(ctx)
	require.NoError(t, err)
	byID := map[string]sandbox.ConsoleSandbox{}
	for _, sb := range list {
		byID[sb.ID] = sb
	}
	require.Contains(t, byID, a.Id)
	require.Contains(t, byID, b.Id)
	sa := byID[a.Id]
	assert.Equal(t, sandboxapi.ClockModeReal, sa.Clock.Mode)
	assert.Equal(t, "2h0m0s", sa.Clock.Offset, "moved on by 2h")
	assert.Equal(t, sandboxapi.ClockModeFrozen, byID[b.Id].Clock.Mode)
	require.Len(t, sa.Faults, 1)
	assert.Equal(t, sandboxapi.FaultKindInternalError, sa.Faults[0].Kind)
	assert.Equal(t, journalLen, sa.Requests)
	assert.Equal(t, hooksLen, sa.Webhooks)
	assert.Positive(t, sa.Webhooks)
	assert.Zero(t, byID[b.Id].Requests)
	assert.Zero(t, byID[b.Id].Webhooks)
	assert.Empty(t, byID[b.Id].Faults)

	one, err := con.Sandbox(ctx, a.Id)
	require.NoError(t, err)
	assert.Equal(t, sa.Requests, one.Requests)
	assert.Equal(t, used.UTC().Truncate(time.Microsecond), one.LastUsedAt.UTC(), "looking is not a use: the TTL is not renewed")
	_, err = con.Sandbox(ctx, "sbx-0000000000000000")
	assert.ErrorIs(t, err, sandbox.ErrNoSuchSandbox)

	// The journal, newest first, filtered.
	all, err := con.Journal(ctx, a.Id, sandbox.JournalFilter{Limit: 1000})
	require.NoError(t, err)
	require.Len(t, all, sa.Requests)
	assert.Greater(t, all[0].Seq, all[len(all)-1].Seq, "newest first")
	faxOnly, err := con.Journal(ctx, a.Id, sandbox.JournalFilter{API: "fax", Limit: 1000})
	require.NoError(t, err)
	require.NotEmpty(t, faxOnly)
	for _, en := range faxOnly {
		assert.Equal(t, sandboxapi.JournalEntryApi("fax"), en.Api)
	}
	send, err := con.Journal(ctx, a.Id, sandbox.JournalFilter{Operation: "SendFax", Status: 2, Limit: 1})
	require.NoError(t, err)
	require.Len(t, send, 1)
	assert.Equal(t, "SendFax", send[0].Operation)
	none, err := con.Journal(ctx, a.Id, sandbox.JournalFilter{Status: 5, Limit: 1000})
	require.NoError(t, err)
	assert.Empty(t, none, "no 5xx")

	// The webhook log, newest first, and a redelivery.
	hooks, err := con.Webhooks(ctx, a.Id, 2)
	require.NoError(t, err)
	require.Len(t, hooks.Attempts, 2)
	assert.Greater(t, hooks.Attempts[0].Seq, hooks.Attempts[1].Seq)
	assert.NotEmpty(t, hooks.Attempts[0].Headers)
	require.NoError(t, con.Redeliver(ctx, a.Id, hooks.Attempts[0].Event.Id))
	var ce *sandbox.ConsoleError
	require.ErrorAs(t, con.Redeliver(ctx, a.Id, "not-a-uuid"), &ce)
	assert.Equal(t, http.StatusBadRequest, ce.Status)
	require.ErrorAs(t, con.Redeliver(ctx, b.Id, hooks.Attempts[0].Event.Id), &ce, "another sandbox's event")
	assert.Equal(t, http.StatusNotFound, ce.Status)

	// A snapshot of b, and a fork of it.
	snap, err := con.Snapshot(ctx, b.Id)
	require.NoError(t, err)
	snaps, err := con.Snapshots(ctx, b.Id)
	require.NoError(t, err)
	require.Len(t, snaps, 1)
	assert.Equal(t, snap, snaps[0].Id)
	fork, err := con.Fork(ctx, snap)
	require.NoError(t, err)
	assert.NotEqual(t, b.Id, fork)
	_, err = con.Sandbox(ctx, fork)
	require.NoError(t, err)
	_, err = con.Fork(ctx, "snp-0000000000000000")
	require.ErrorAs(t, err, &ce)
	assert.False(t, errors.Is(err, sandbox.ErrNoSuchSandbox))
}
