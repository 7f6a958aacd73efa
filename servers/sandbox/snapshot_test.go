package sandbox_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/stack"
)

// redeliver queues b's webhook event id again and waits until its copy is
// acknowledged.
func (e *env) redeliver(t testing.TB, b *box, id string) sandboxapi.WebhookEvent {
	t.Helper()
	e.clock.Advance(time.Second) // a fresh timestamp for the redelivery
	resp, err := b.api.RedeliverSandboxWebhookWithResponse(context.Background(), b.Id, uuid.MustParse(id))
	copyEv := *testkit.Answered(t, http.StatusAccepted, resp, err).JSON202
	require.Equal(t, id, copyEv.Id)
	e.driveUntil(t, b, "the redelivery acknowledged", func(p *sandboxapi.WebhookLogPage) bool {
		return slices.ContainsFunc(p.Data, func(a sandboxapi.WebhookAttempt) bool {
			return a.Event.Seq == copyEv.Seq && a.Succeeded && a.Event.State == sandboxapi.WebhookEventStateDelivered
		})
	})
	return copyEv
}

func TestSnapshots_AForkOfASandboxWithRedeliveriesHoldsItsWebhookLogWithNewIDs(t *testing.T) {
	e := start(t, envOptions{})
	orig := e.create(t, sandboxapi.CreateSandboxRequest{})
	sent := e.sendFax(t, orig, "+13125550800")
	e.driveUntil(t, orig, "fax.delivered acknowledged", delivered(sent.ID.String(), "fax.delivered"))
	first := webhookLog(t, orig, 0).Data[0].Event
	// Two redeliveries of one event, so that the copy keeps three rows of
	// one event apart.
	e.redeliver(t, orig, first.Id)
	e.redeliver(t, orig, first.Id)
	before := webhookLog(t, orig, 0)
	require.Empty(t, before.Pending)

	f := e.fork(t, snapshot(t, orig).Id)
	forkedFax := faxesByTo(t, f.fax)["+13125550800"]
	require.NotEmpty(t, forkedFax.ID)
	after := webhookLog(t, f, 0)
	assert.Empty(t, after.Pending)
	require.Len(t, after.Data, len(before.Data), "the fork's log has an attempt for each of the original's")

	// The fork's log is the original's, attempt for attempt, its events
	// renamed consistently: one old id or seq, one new.
	ids, seqs := map[string]string{}, map[int64]int64{}
	redeliveries := 0
	for i, o := range before.Data {
		n := after.Data[i]
		assert.Equal(t, o.Event.Type, n.Event.Type, "attempt %d", i)
		assert.Equal(t, o.Event.State, n.Event.State, "attempt %d", i)
		assert.Equal(t, o.Event.Attempts, n.Event.Attempts, "attempt %d", i)
		assert.Equal(t, o.Attempt, n.Attempt, "attempt %d", i)
		assert.Equal(t, o.Succeeded, n.Succeeded, "attempt %d", i)
		assert.Equal(t, forkedFax.ID.String(), n.Event.FaxId, "attempt %d", i)
		assert.NotEqual(t, o.Event.Id, n.Event.Id, "attempt %d: the fork's event has an id of its own", i)
		assert.Contains(t, n.Body, n.Event.Id, "attempt %d: the body names the fork's event", i)
		assert.NotContains(t, n.Body, o.Event.Id, "attempt %d", i)
		e.verify(t, f, n) // signed over the fork's body, as a receiver checks it
		if id, ok := ids[o.Event.Id]; ok {
			assert.Equal(t, id, n.Event.Id, "attempt %d: a redelivery keeps its event's new id", i)
		}
		ids[o.Event.Id] = n.Event.Id
		if seq, ok := seqs[o.Event.Seq]; ok {
			assert.Equal(t, seq, n.Event.Seq, "attempt %d", i)
		}
		seqs[o.Event.Seq] = n.Event.Seq
		if o.Event.RedeliveryOf == nil {
			assert.Nil(t, n.Event.RedeliveryOf, "attempt %d", i)
			continue
		}
		redeliveries++
		require.NotNil(t, n.Event.RedeliveryOf, "attempt %d", i)
		assert.Equal(t, seqs[*o.Event.RedeliveryOf], *n.Event.RedeliveryOf, "attempt %d: the redelivery repeats the fork's event", i)
	}
	assert.Equal(t, 2, redeliveries, "both redeliveries were copied")
	forkedSeqs := map[int64]bool{}
	for _, s := range seqs {
		forkedSeqs[s] = true
	}
	assert.Len(t, forkedSeqs, len(seqs), "each of the original's rows has a row of its own in the fork")

	// The fork redelivers its copy of the event in turn, and the original's
	// log is as it was.
	again := e.redeliver(t, f, ids[first.Id])
	assert.Equal(t, seqs[first.Seq], *again.RedeliveryOf)
	assert.Equal(t, before.Data, webhookLog(t, orig, 0).Data)
}

// A snapshot made through one replica is listed by another and forks on a
// third, and outlives the replica that made it.
func TestSnapshots_OnThreeReplicasASnapshotMadeOnOneForksOnAnother(t *testing.T) {
	openDB := sharedOpenDB(t)
	replicaOpts := envOptions{replica: &replicaOf{openDB: openDB, adminToken: "admin-token", creatorToken: "creator-token", masterKey: fixedKey}}
	first, second, third := start(t, replicaOpts), start(t, replicaOpts), start(t, replicaOpts)
	ctx := context.Background()

	orig := first.createFixture(t, pamFixture)
	snap := snapshot(t, orig)
	onSecond := second.client(t, orig.Token)
	list, err := onSecond.ListSandboxSnapshotsWithResponse(ctx, orig.Id)
	data := testkit.Answered(t, http.StatusOK, list, err).JSON200.Data
	require.Len(t, data, 1)
	assert.Equal(t, snap.Id, data[0].Id)

	want := groupsOf(t, orig)
	fork := third.fork(t, snap.Id)
	assert.Equal(t, want, groupsOf(t, fork))
	me, err := pamKeyClient(t, fork, "ci").GetCurrentUser(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ci-bot", me.Name)

	// The replica that made it stops: the others still fork it.
	require.NoError(t, first.st.Close())
	again := second.fork(t, snap.Id)
	assert.Equal(t, want, groupsOf(t, again))
}

// A snapshot survives a restart of the stack (its SQLite files).
func TestSnapshots_SurviveARestart(t *testing.T) {
	dir := t.TempDir()
	cfg := func() stack.Config {
		return stack.Config{DataDir: dir, Clock: clock.NewFake(time.Now()), AdminToken: "admin-token", SandboxCreatorToken: "creator-token", MasterKey: fixedKey}
	}
	before := openEnv(t, cfg(), true)
	orig := before.createFixture(t, pamFixture)
	snap := snapshot(t, orig)
	want := groupsOf(t, orig)
	require.NoError(t, before.st.Close())

	after := openEnv(t, cfg(), true)
	got, err := after.admin.GetSandboxSnapshotWithResponse(context.Background(), orig.Id, snap.Id)
	assert.Equal(t, snap.Apis, testkit.Answered(t, http.StatusOK, got, err).JSON200.Apis)
	fork := after.create(t, sandboxapi.CreateSandboxRequest{Snapshot: &snap.Id})
	assert.Equal(t, want, groupsOf(t, fork))
}
