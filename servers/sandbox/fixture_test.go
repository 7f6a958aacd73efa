package sandbox_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/tenantapi"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/stack"
)

// createFrom creates a sandbox from the JSON body given as is.
func (e *env) createFrom(t testing.TB, body string) (*sandboxapi.CreateSandboxResponse, error) {
	t.Helper()
	return e.creator.CreateSandboxWithBodyWithResponse(context.Background(), "application/json", strings.NewReader(body))
}

// createFixture creates a sandbox from fixture (JSON) and opens it.
func (e *env) createFixture(t testing.TB, fixture string) *box {
	t.Helper()
	resp, err := e.createFrom(t, `{"clock": "frozen", "fixture": `+fixture+`}`)
	return e.open(t, testkit.Answered(t, http.StatusCreated, resp, err).JSON201)
}

// pamKeyClient is a PAM client on a key a fixture made.
func pamKeyClient(t testing.TB, b *box, name string) *tenantapi.PAMClient {
	t.Helper()
	require.NotNil(t, b.FixtureCredentials, "the fixture's credentials")
	require.NotNil(t, b.FixtureCredentials.Pam)
	k, ok := b.FixtureCredentials.Pam.Keys[name]
	require.True(t, ok, "key %q in %v", name, b.FixtureCredentials.Pam.Keys)
	return tenantapi.NewPAM(t, b.Credentials.Pam.BaseUrl, b.Credentials.Pam.Team, k.KeyId, k.KeySecret)
}

func groupNames(t testing.TB, c *tenantapi.PAMClient) []string {
	t.Helper()
	var out []string
	for g, err := range c.ListGroups(context.Background(), nil) {
		require.NoError(t, err)
		out = append(out, g.Name)
	}
	slices.Sort(out)
	return out
}

// groupsOf lists b's PAM groups by name, its seeded admins group (named
// after the sandbox) as "(admins)".
func groupsOf(t testing.TB, b *box) []string {
	t.Helper()
	out := groupNames(t, b.pam)
	for i, name := range out {
		if name == b.Id+"-admins" {
			out[i] = "(admins)"
		}
	}
	slices.Sort(out)
	return out
}

func TestFixtures_TheMinimalFixtureCreatesItsGroup(t *testing.T) {
	e := start(t, envOptions{})
	b := e.createFixture(t, `{"pam": {"groups": [{"name": "fx-group", "roles": ["end_user"]}]}}`)
	g, err := b.pam.GetGroup(context.Background(), "fx-group")
	require.NoError(t, err)
	assert.Equal(t, []pamapi.Role{"end_user"}, g.Roles)
	assert.Nil(t, b.FixtureCredentials, "the fixture made no credentials")
}

const pamFixture = `{"pam": {
	"groups": [{"name": "readers", "roles": ["end_user"]}, {"name": "ops", "roles": ["pam_admin", "security_admin"]}],
	"users": [{"name": "alice", "groups": ["readers"]}, {"name": "bob"}],
	"service_users": [{"name": "ci-bot", "groups": ["ops"], "keys": ["ci", "ci-spare"]}, {"name": "idle-bot"}]
}}`

func TestFixtures_PAMSectionCreatesGroupsUsersServiceUsersAndNamedKeys(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.createFixture(t, pamFixture)

	for name, roles := range map[string][]pamapi.Role{"readers": {"end_user"}, "ops": {"pam_admin", "security_admin"}} {
		g, err := b.pam.GetGroup(ctx, name)
		require.NoError(t, err, name)
		assert.ElementsMatch(t, roles, g.Roles, name)
	}
	alice, err := b.pam.GetUser(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, pamapi.UserKind("human"), alice.Kind)
	var members []string
	for u, err := range b.pam.ListGroupMembers(ctx, "readers", nil) {
		require.NoError(t, err)
		members = append(members, u.Name)
	}
	assert.Equal(t, []string{"alice"}, members)
	_, err = b.pam.GetServiceUser(ctx, "idle-bot")
	require.NoError(t, err)

	// The keys come back under the fixture's names, and work: ci-bot is in
	// ops, which holds pam_admin.
	for _, name := range []string{"ci", "ci-spare"} {
		c := pamKeyClient(t, b, name)
		me, err := c.GetCurrentUser(ctx)
		require.NoError(t, err, name)
		assert.Equal(t, "ci-bot", me.Name)
		assert.Contains(t, groupNames(t, c), "ops")
	}
	assert.Equal(t, "ci-bot", b.FixtureCredentials.Pam.Keys["ci"].ServiceUser)
	assert.NotEqual(t, b.FixtureCredentials.Pam.Keys["ci"].KeyId, b.FixtureCredentials.Pam.Keys["ci-spare"].KeyId)

	// GetSandbox answers them too.
	got, err := b.api.GetSandboxWithResponse(ctx, b.Id)
	require.Equal(t, b.FixtureCredentials, testkit.Answered(t, http.StatusOK, got, err).JSON200.FixtureCredentials)
}

func TestFixtures_ABadFixtureAnswers400WithThePointerAndLeavesNoRows(t *testing.T) {
	e := start(t, envOptions{})
	e.create(t, sandboxapi.CreateSandboxRequest{}) // rows to count besides
	for _, c := range []struct {
		name, fixture, pointer string
	}{
		{"unknown role", `{"pam": {"groups": [{"name": "g", "roles": ["root"]}]}}`, "/fixture/pam/groups/0/roles/0"},
		{"duplicate group", `{"pam": {"groups": [{"name": "g", "roles": []}, {"name": "g", "roles": []}]}}`, "/fixture/pam/groups/1/name"},
		{"duplicate user", `{"pam": {"users": [{"name": "u"}], "service_users": [{"name": "u"}]}}`, "/fixture/pam/service_users/0/name"},
		{"unknown group", `{"pam": {"users": [{"name": "u", "groups": ["nope"]}]}}`, "/fixture/pam/users/0/groups/0"},
		{"bad user name", `{"pam": {"users": [{"name": "Not Valid"}]}}`, "/fixture/pam/users/0/name"},
		{"unknown section", `{"pam": {}, "ldap": {}}`, "/fixture"},
	} {
		t.Run(c.name, func(t *testing.T) { e.refusesFixture(t, c.fixture, c.pointer) })
	}
}

// refusesFixture creates a sandbox of fixture, which must be answered 400
// with pointer, the JSON pointer of what is wrong, and leave no rows.
func (e *env) refusesFixture(t *testing.T, fixture, pointer string) {
	t.Helper()
	before := e.tableCounts(t)
	resp, err := e.createFrom(t, `{"fixture": `+fixture+`}`)
	ans := testkit.Answered(t, http.StatusBadRequest, resp, err).JSON400
	require.NotNil(t, ans.Pointer, "%s", resp.Body)
	assert.Equal(t, pointer, *ans.Pointer, ans.Message)
	assert.Equal(t, before, e.tableCounts(t), "a refused fixture leaves no rows")
}

// snapshot snapshots b through its own token.
func snapshot(t testing.TB, b *box) sandboxapi.Snapshot {
	t.Helper()
	resp, err := b.api.CreateSandboxSnapshotWithResponse(context.Background(), b.Id, sandboxapi.CreateSandboxSnapshotJSONRequestBody{})
	return *testkit.Answered(t, http.StatusCreated, resp, err).JSON201
}

// fork forks a sandbox of snapshot id with the creator token.
func (e *env) fork(t testing.TB, id string) *box {
	t.Helper()
	return e.create(t, sandboxapi.CreateSandboxRequest{Snapshot: &id})
}

func TestSnapshots_AForkHoldsTheStateWithNewCredentialsAndIsIndependent(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	orig := e.createFixture(t, pamFixture)
	_, err := orig.pam.CreateGroup(ctx, "made-by-api", "end_user")
	require.NoError(t, err)
	advance(t, orig, "90m")
	addFault(t, orig, sandboxapi.FaultRequest{Kind: "internal-error", Api: apiOf("fax"), Count: ptr(3)})
	snap := snapshot(t, orig)
	assert.Contains(t, snap.Apis, "pam")
	assert.Equal(t, orig.Id, snap.SandboxId)
	origClock := clockOf(t, orig)
	assert.WithinDuration(t, origClock.Now, snap.Now, time.Millisecond)

	const n = 20
	forks := make([]*box, n)
	var wg sync.WaitGroup
	for i := range forks {
		wg.Go(func() { forks[i] = e.fork(t, snap.Id) })
	}
	wg.Wait()
	require.False(t, t.Failed())

	want := groupsOf(t, orig)
	seen := map[string]bool{orig.Credentials.Pam.KeySecret: true, orig.FixtureCredentials.Pam.Keys["ci"].KeySecret: true}
	for i, f := range forks {
		assert.Equal(t, want, groupsOf(t, f), "fork %d holds the groups", i)
		assert.Equal(t, sandboxapi.ClockModeFrozen, f.Clock)
		assert.WithinDuration(t, snap.Now, clockOf(t, f).Now, time.Millisecond, "the fork starts at the snapshot's time")
		assert.Len(t, listFaults(t, f), 1, "the fork has the faults")
		for _, secret := range []string{f.Credentials.Pam.KeySecret, f.FixtureCredentials.Pam.Keys["ci"].KeySecret} {
			assert.False(t, seen[secret], "fork %d's credentials are new", i)
			seen[secret] = true
		}
		me, err := pamKeyClient(t, f, "ci").GetCurrentUser(ctx)
		require.NoError(t, err)
		assert.Equal(t, "ci-bot", me.Name)
		// The original's credentials do not work on the fork.
		foreign, err := orig.pam.API().GetGroupWithResponse(ctx, f.Credentials.Pam.Team, "ops")
		require.NoError(t, err)
		assert.Equal(t, http.StatusForbidden, foreign.StatusCode(), "the original's token on fork %d: %s", i, foreign.Body)
	}

	// Writes in one fork are seen nowhere else; clocks move apart.
	wg = sync.WaitGroup{}
	for i, f := range forks {
		wg.Go(func() {
			_, err := f.pam.CreateGroup(ctx, fmt.Sprintf("fork-%d", i), "end_user")
			assert.NoError(t, err)
			advance(t, f, fmt.Sprintf("%dm", i+1))
		})
	}
	wg.Wait()
	for i, f := range forks {
		assert.Equal(t, sortedWith(want, fmt.Sprintf("fork-%d", i)), groupsOf(t, f), "fork %d", i)
		assert.WithinDuration(t, snap.Now.Add(time.Duration(i+1)*time.Minute), clockOf(t, f).Now, time.Millisecond, "fork %d's clock", i)
	}
	assert.Equal(t, want, groupsOf(t, orig), "the original sees none of the forks' writes")
	assert.WithinDuration(t, origClock.Now, clockOf(t, orig).Now, time.Millisecond)

	// Deleting the original keeps the snapshot usable (by the admin).
	del, err := orig.api.DeleteSandboxWithResponse(ctx, orig.Id)
	testkit.Answered(t, http.StatusNoContent, del, err)
	late := e.fork(t, snap.Id)
	assert.Equal(t, want, groupsOf(t, late))
	got, err := e.admin.GetSandboxSnapshotWithResponse(ctx, orig.Id, snap.Id)
	assert.Equal(t, snap.Id, testkit.Answered(t, http.StatusOK, got, err).JSON200.Id)
	list, err := e.admin.ListSandboxSnapshotsWithResponse(ctx, orig.Id)
	assert.Len(t, testkit.Answered(t, http.StatusOK, list, err).JSON200.Data, 1)

	// A deleted snapshot forks no more; its forks live on.
	gone, err := e.admin.DeleteSandboxSnapshotWithResponse(ctx, orig.Id, snap.Id)
	testkit.Answered(t, http.StatusNoContent, gone, err)
	resp, err := e.creator.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{Snapshot: &snap.Id})
	testkit.Answered(t, http.StatusNotFound, resp, err)
	assert.Equal(t, want, groupsOf(t, late))
}

func sortedWith(list []string, more ...string) []string {
	out := append(slices.Clone(list), more...)
	slices.Sort(out)
	return out
}

func TestSnapshots_RightsTTLAndCap(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, sandboxapi.CreateSandboxRequest{})
	snap := snapshot(t, a)
	// Another sandbox's token sees no snapshot of a; the creator token may
	// fork but not snapshot.
	got, err := b.api.GetSandboxSnapshotWithResponse(ctx, a.Id, snap.Id)
	testkit.Answered(t, http.StatusNotFound, got, err)
	mk, err := e.creator.CreateSandboxSnapshotWithResponse(ctx, a.Id, sandboxapi.CreateSandboxSnapshotJSONRequestBody{})
	testkit.Answered(t, http.StatusForbidden, mk, err)
	own, err := b.api.GetSandboxSnapshotWithResponse(ctx, b.Id, snap.Id)
	testkit.Answered(t, http.StatusNotFound, own, err)

	// A fixture and a snapshot together are refused.
	both, err := e.createFrom(t, `{"snapshot": "`+snap.Id+`", "fixture": {}}`)
	testkit.Answered(t, http.StatusBadRequest, both, err)

	// The TTL runs from the creation; the sweep deletes it with its rows.
	short, err := a.api.CreateSandboxSnapshotWithResponse(ctx, a.Id, sandboxapi.CreateSandboxSnapshotJSONRequestBody{Ttl: ptr("2m")})
	shortSnap := testkit.Answered(t, http.StatusCreated, short, err).JSON201
	assert.Equal(t, "2m0s", shortSnap.Ttl)
	before := e.tableCounts(t)
	e.clock.Advance(3 * time.Minute)
	_, err = e.st.Sandboxes.Sweep(ctx)
	require.NoError(t, err)
	resp, err := e.creator.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{Snapshot: &shortSnap.Id})
	testkit.Answered(t, http.StatusNotFound, resp, err)
	after := e.tableCounts(t)
	assert.Equal(t, before["sandbox.snapshots"]-1, after["sandbox.snapshots"])
	assert.Equal(t, before["pam.teams"]-1, after["pam.teams"], "the snapshot's rows went with it")
	list, err := a.api.ListSandboxSnapshotsWithResponse(ctx, a.Id)
	data := testkit.Answered(t, http.StatusOK, list, err).JSON200.Data
	require.Len(t, data, 1)
	assert.Equal(t, snap.Id, data[0].Id)
}

func TestSnapshots_TheDeploymentHoldsAtMostItsLimit(t *testing.T) {
	cfg := stack.Config{DataDir: t.TempDir(), OpenDB: stacktest.OpenDB(t), Clock: clock.NewFake(time.Now()), SnapshotLimit: 2}
	e := openEnv(t, cfg, true)
	ctx := context.Background()
	a, b := e.pair(t, sandboxapi.CreateSandboxRequest{})
	first, second := snapshot(t, a), snapshot(t, b)
	over, err := a.api.CreateSandboxSnapshotWithResponse(ctx, a.Id, sandboxapi.CreateSandboxSnapshotJSONRequestBody{})
	ans := testkit.Answered(t, http.StatusConflict, over, err).JSON409
	assert.Equal(t, sandboxapi.LimitReachedErrorErrorLimitReached, ans.Error)
	assert.Contains(t, ans.Message, "2 snapshots")
	gone, err := a.api.DeleteSandboxSnapshotWithResponse(ctx, a.Id, first.Id)
	testkit.Answered(t, http.StatusNoContent, gone, err)
	snapshot(t, a)
	assert.Equal(t, b.Id, second.SandboxId)
}

// A reset takes a fixture's or a snapshot's sandbox back to the tenants
// every sandbox has, under its own credentials.
func TestSnapshots_AResetForkKeepsItsCredentialsAndDropsTheFixtureState(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	orig := e.createFixture(t, pamFixture)
	f := e.fork(t, snapshot(t, orig).Id)
	for _, b := range []*box{orig, f} {
		resp, err := b.api.ResetSandboxWithResponse(ctx, b.Id)
		out := testkit.Answered(t, http.StatusOK, resp, err).JSON200
		assert.Nil(t, out.FixtureCredentials, "%s: the fixture's credentials went with its state", b.Id)
		assert.Equal(t, []string{"(admins)"}, groupsOf(t, b), "%s: the seeded group alone, read with its own key", b.Id)
	}
}

// The credentials a fixture's fax and storage sections made are answered by
// GetSandbox as by the create, under the names the fixture gave them.
func TestFixtures_GetSandboxAnswersTheFixturesCredentials(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	for name, fixture := range map[string]string{"fax": faxFixture, "storage": storageFixture} {
		t.Run(name, func(t *testing.T) {
			b := e.createFixture(t, fixture)
			resp, err := b.api.GetSandboxWithResponse(ctx, b.Id)
			testkit.Answered(t, http.StatusOK, resp, err)
			got := resp.JSON200.FixtureCredentials
			require.NotNil(t, got, "%s", resp.Body)
			assert.Equal(t, b.FixtureCredentials, got, "the same as the create answered")
			switch name {
			case "fax":
				require.NotNil(t, got.Fax)
				assert.Contains(t, *got.Fax.ApiKeys, "ci")
				assert.Contains(t, *got.Fax.Applications, "billing")
				assert.Contains(t, *got.Fax.Numbers, "main")
			case "storage":
				require.NotNil(t, got.Storage)
				assert.Contains(t, *got.Storage.Keys, "ci")
				assert.Equal(t, b.Id+"-logs", (*got.Storage.Buckets)["logs"])
			}
		})
	}
}

// A snapshot request whose ttl is not a duration is 400, its pointer naming
// the field, and makes no snapshot.
func TestSnapshots_ATTLThatIsNotADurationIs400NamingIt(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	resp, err := b.api.CreateSandboxSnapshotWithResponse(ctx, b.Id, sandboxapi.CreateSandboxSnapshotJSONRequestBody{Ttl: ptr("soon")})
	testkit.Answered(t, http.StatusBadRequest, resp, err)
	require.NotNil(t, resp.JSON400.Pointer, "%s", resp.Body)
	assert.Equal(t, "/ttl", *resp.JSON400.Pointer)
	list, err := b.api.ListSandboxSnapshotsWithResponse(ctx, b.Id)
	testkit.Answered(t, http.StatusOK, list, err)
	assert.Empty(t, list.JSON200.Data, "no snapshot made")
}
