package sandbox_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/stack"
)

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
