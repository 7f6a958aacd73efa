package pam_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// The replica tests run PAM servers in this process, each with its own
// connection pool, on one PostgreSQL schema: the replicas of one service
// behind a load balancer. Whatever the run's backend, they need PostgreSQL
// (and skip without it outside CI, as testdb.PostgresURL says).

// startReplicas starts n PAM servers together on one fresh PostgreSQL
// schema: together, so that they also race to create the stored keys (the
// page-token key), which they must end up sharing.
func startReplicas(t *testing.T, n int, opts pamtest.Options) []*pamtest.Env {
	t.Helper()
	url, schema := testdb.OpenShared(t, pamtest.Migrations)
	envs := make([]*pamtest.Env, n)
	stops := make([]func(), n)
	errs := make([]error, n)
	onViolation := func(r *http.Request, status int, err error) {
		t.Errorf("PAM response %d to %s %s breaks the spec: %v", status, r.Method, r.URL, err)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			db, err := pgdb.Open(context.Background(), url, schema, pam.API.Migrations().Postgres)
			if err != nil {
				errs[i] = err
				return
			}
			envs[i], stops[i], errs[i] = pamtest.OpenDB(db, opts, onViolation)
		})
	}
	wg.Wait()
	for _, stop := range stops {
		if stop != nil {
			t.Cleanup(stop)
		}
	}
	for _, err := range errs {
		require.NoError(t, err)
	}
	return envs
}

// listAll walks the groups list count at a time, sending page i to
// replicas[i%len(replicas)] with the offset the previous page linked
// (through the generated client, so the offset is the only thing carried
// over), and returns the names in the order listed.
func listAll(t *testing.T, apis []*pamapi.ClientWithResponses, tok string, count int) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	var offset *string
	for page := 0; ; page++ {
		require.Less(t, page, 10000)
		resp, err := apis[page%len(apis)].ListGroupsWithResponse(ctx, "acme", &pamapi.ListGroupsParams{Count: &count, Offset: offset}, bearer(tok))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		for _, g := range resp.JSON200.List {
			names = append(names, g.Name)
		}
		next := linkParam(t, resp.HTTPResponse, "next", "offset")
		if next == "" {
			return names
		}
		offset = &next
	}
}

// acmeReplicas is two PAM replicas on one database, a and b, with the team
// acme, its pam_admin root and a worker of workerRole, both created
// through a, and root's token issued through a.
type acmeReplicas struct {
	a, b         *pamtest.Env
	apiA, apiB   *pamapi.ClientWithResponses
	root, worker pam.ServiceUserCredentials
	rootTok      string
}

func startAcmeReplicas(t *testing.T, workerRole string) acmeReplicas {
	t.Helper()
	envs := startReplicas(t, 2, pamtest.Options{})
	r := acmeReplicas{a: envs[0], b: envs[1]}
	r.apiA, r.apiB = newAPI(t, r.a.URL), newAPI(t, r.b.URL)
	r.a.Team(t, "acme")
	r.root = r.a.ServiceUser(t, "acme", "root", "pam_admin")
	r.worker = r.a.ServiceUser(t, "acme", "worker", workerRole)
	r.rootTok = issueToken(t, r.apiA, "acme", r.root.KeyID, r.root.KeySecret)
	return r
}

func TestReplicas_ShareTokensGroupsPagesRevocationsAndMaintenance(t *testing.T) {
	ctx := context.Background()
	envs := startReplicas(t, 2, pamtest.Options{})
	a, b := envs[0], envs[1]
	apiA, apiB := newAPI(t, a.URL), newAPI(t, b.URL)
	a.Team(t, "acme")
	root := b.ServiceUser(t, "acme", "root", "pam_admin")
	worker := a.ServiceUser(t, "acme", "worker", "resource_admin")

	// A token issued by A works on B, and the other way round.
	tok := issueToken(t, apiA, "acme", root.KeyID, root.KeySecret)
	me, err := apiB.GetCurrentUserWithResponse(ctx, "acme", bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, me.StatusCode(), string(me.Body))
	assert.Equal(t, "root", me.JSON200.Name)
	workerTok := issueToken(t, apiB, "acme", worker.KeyID, worker.KeySecret)
	resp, err := apiA.ListGroupsWithResponse(ctx, "acme", nil, bearer(workerTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))

	// A group created on B is listed on A once A heard B's commit, though
	// A listed the groups just before (no page of A's outlives B's write
	// by more than the notification's delivery: sqldb.Sync waits for it).
	created, err := apiB.CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "from-b", Roles: []pamapi.Role{pamapi.RoleEndUser}}, bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	require.NoError(t, sqldb.Sync(ctx, a.DB))
	assert.Contains(t, listAll(t, []*pamapi.ClientWithResponses{apiA}, workerTok, 100), "from-b")

	// 1,000 groups created through both replicas, walked in pages served
	// by A and B in turn, forwards: every group once, in order.
	want := []string{"from-b", "root-group", "worker-group"}
	for i := range 1000 {
		name := fmt.Sprintf("g-%04d", i)
		require.NoError(t, envs[i%2].Operator.CreateTeamGroup(ctx, "acme", name, nil))
		want = append(want, name)
	}
	require.NoError(t, sqldb.Sync(ctx, a.DB))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	slices.Sort(want)
	for _, count := range []int{37, 100} {
		assert.Equal(t, want, listAll(t, []*pamapi.ClientWithResponses{apiA, apiB}, tok, count), "count %d", count)
	}

	// A narrowing of the worker's roles on A is seen by B on its next
	// request once B heard A's commit.
	upd, err := apiA.UpdateGroupWithResponse(ctx, "acme", "worker-group", pamapi.UpdateGroupJSONRequestBody{Roles: []pamapi.Role{pamapi.RoleEndUser}}, bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, upd.StatusCode(), string(upd.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	resp, err = apiB.ListGroupsWithResponse(ctx, "acme", nil, bearer(workerTok))
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode(), string(resp.Body))

	// The worker's key deleted on A: its token is refused by B once B
	// heard A's commit.
	del, err := apiA.DeleteServiceUserKeyWithResponse(ctx, "acme", "worker", worker.KeyID, bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, del.StatusCode(), string(del.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	me, err = apiB.GetCurrentUserWithResponse(ctx, "acme", bearer(workerTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, me.StatusCode(), string(me.Body))
	assert.Equal(t, pamapi.ErrorNameAuthorizationError, decodeError(t, http.StatusUnauthorized, me.Body).Error)

	// Maintenance switched on through A: B answers 503 at once, and says
	// so to the operator.
	require.NoError(t, a.Operator.SetOffline(ctx, true))
	assert.True(t, b.Operator.Offline())
	me, err = apiB.GetCurrentUserWithResponse(ctx, "acme", bearer(tok))
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, me.StatusCode(), string(me.Body))
	require.NoError(t, b.Operator.SetOffline(ctx, false))
	assert.False(t, a.Operator.Offline())

	// The team's tokens revoked by the operator on B: A refuses the root
	// token once it heard B's commit.
	me, err = apiA.GetCurrentUserWithResponse(ctx, "acme", bearer(tok))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, me.StatusCode(), string(me.Body))
	require.NoError(t, b.Operator.RevokeTokens(ctx, "acme"))
	require.NoError(t, sqldb.Sync(ctx, a.DB))
	me, err = apiA.GetCurrentUserWithResponse(ctx, "acme", bearer(tok))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, me.StatusCode(), string(me.Body))
}

// A rate limit of N per period holds across the replicas: of many requests
// sent to both at once, exactly N succeed (the token exchange among them),
// and the X-RateLimit-Remaining of the successes count down N-1 ... 0, each
// once, whichever replica answered.
func TestReplicas_RateLimitIsOneBucketAcrossReplicas(t *testing.T) {
	const limit = 25
	envs := startReplicas(t, 2, pamtest.Options{Settings: pam.Settings{RateLimit: limit, RateLimitPeriod: time.Hour}})
	apis := []*pamapi.ClientWithResponses{newAPI(t, envs[0].URL), newAPI(t, envs[1].URL)}
	envs[0].Team(t, "acme")
	root := envs[1].ServiceUser(t, "acme", "root", "end_user")
	tok := issueToken(t, apis[1], "acme", root.KeyID, root.KeySecret)

	var (
		mu        sync.Mutex
		remaining = []int{limit - 1} // the exchange's
		refused   int
	)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 2 * limit / 8 {
				resp, err := apis[(w+i)%2].GetCurrentUserWithResponse(context.Background(), "acme", bearer(tok))
				if !assert.NoError(t, err) {
					return
				}
				rem, err := strconv.Atoi(resp.HTTPResponse.Header.Get("X-RateLimit-Remaining"))
				assert.NoError(t, err)
				assert.Equal(t, strconv.Itoa(limit), resp.HTTPResponse.Header.Get("X-RateLimit-Limit"))
				mu.Lock()
				switch resp.StatusCode() {
				case http.StatusOK:
					remaining = append(remaining, rem)
				case http.StatusTooManyRequests:
					refused++
					assert.Zero(t, rem)
				default:
					t.Errorf("status %d: %s", resp.StatusCode(), resp.Body)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(remaining)
	want := make([]int, limit)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, remaining, "exactly %d successes, each leaving one fewer", limit)
	assert.Equal(t, 8*(2*limit/8)-(limit-1), refused)
}

// 32 clients creating groups through the two replicas at once, in pairs
// racing for each name, against a group quota: no 5xx, each name created
// once, the quota met exactly, and the stored groups are the 201s.
func TestReplicas_ConcurrentCreatesKeepNamesAndQuotasExact(t *testing.T) {
	const (
		clients = 32
		perUser = 20
		quota   = 250
	)
	ctx := context.Background()
	envs := startReplicas(t, 2, pamtest.Options{})
	apis := []*pamapi.ClientWithResponses{newAPI(t, envs[0].URL), newAPI(t, envs[1].URL)}
	envs[0].Team(t, "acme")
	root := envs[1].ServiceUser(t, "acme", "root", "pam_admin") // root-group is one live group
	tok := issueToken(t, apis[0], "acme", root.KeyID, root.KeySecret)
	q := quota
	require.NoError(t, envs[0].Operator.SetQuotas(ctx, "acme", pam.Quotas{Groups: &q}))

	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		byName   = map[string]int{}
	)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range perUser {
				// Clients 2k (on A) and 2k+1 (on B) create the same names.
				name := fmt.Sprintf("c-%02d-%02d", c/2, i)
				resp, err := apis[c%2].CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: name, Roles: []pamapi.Role{}}, bearer(tok))
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				statuses[resp.StatusCode()]++
				if resp.StatusCode() == http.StatusCreated {
					byName[name]++
				}
				mu.Unlock()
				if resp.StatusCode() == http.StatusForbidden {
					assert.Equal(t, pamapi.ErrorNameQuotaExceeded, decodeError(t, http.StatusForbidden, resp.Body).Error)
				}
			}
		})
	}
	wg.Wait()
	for status, n := range statuses {
		assert.Contains(t, []int{http.StatusCreated, http.StatusConflict, http.StatusForbidden}, status, "%d answers %d", n, status)
	}
	assert.Equal(t, quota-1, statuses[http.StatusCreated], "the quota is met exactly: %v", statuses)
	for name, n := range byName {
		assert.Equal(t, 1, n, "%s created once", name)
	}
	assert.Equal(t, clients*perUser, statuses[http.StatusCreated]+statuses[http.StatusConflict]+statuses[http.StatusForbidden])

	listed := listAll(t, apis, tok, 100)
	assert.Len(t, listed, quota, "the stored groups are root-group and the 201s")
	for name := range byName {
		assert.Contains(t, listed, name)
	}
}

// A token exchange through one replica is announced to no other (no cache
// holds a token's absence), a group create is (lists must show it), and
// what changes a cached token or roles is seen by the other replica as soon
// as it heard the commit: a member added to a new group widens its roles
// there, a disabled user's token is refused there. (That a group create
// leaves the other replica's tokens and roles cached, BenchmarkReplicaWrites
// shows in the statements per create.)
func TestReplicas_ExchangesAndCreatesKeepTheOtherReplicasAuthCaches(t *testing.T) {
	ctx := context.Background()
	r := startAcmeReplicas(t, "end_user")
	b, apiA, apiB, worker, rootTok := r.b, r.apiA, r.apiB, r.worker, r.rootTok
	workerTok := issueToken(t, apiA, "acme", worker.KeyID, worker.KeySecret)
	require.NoError(t, sqldb.Sync(ctx, b.DB))

	// B reads the worker's token and roles once: an end user may not list
	// groups.
	resp, err := apiB.ListGroupsWithResponse(ctx, "acme", nil, bearer(workerTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode(), string(resp.Body))

	// Exchanges on A are heard by nobody.
	heard := sqldb.HeardOn(b.DB)
	for range 5 {
		issueToken(t, apiA, "acme", worker.KeyID, worker.KeySecret)
	}
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	assert.Equal(t, heard, sqldb.HeardOn(b.DB), "a token exchange is not announced")

	// A group created on A is heard by B; the worker's roles are as they
	// were (the group has no members yet).
	created, err := apiA.CreateGroupWithResponse(ctx, "acme", pamapi.CreateGroupJSONRequestBody{Name: "admins", Roles: []pamapi.Role{pamapi.RolePamAdmin}}, bearer(rootTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	assert.Equal(t, heard+1, sqldb.HeardOn(b.DB), "a group create is announced")
	resp, err = apiB.ListGroupsWithResponse(ctx, "acme", nil, bearer(workerTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode(), string(resp.Body))

	// The worker joins the new group on A: B lets it list the groups once
	// it heard the commit, and the list shows the group.
	added, err := apiA.AddGroupMemberWithResponse(ctx, "acme", "admins", pamapi.AddGroupMemberJSONRequestBody{UserName: "worker"}, bearer(rootTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, added.StatusCode(), string(added.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	resp, err = apiB.ListGroupsWithResponse(ctx, "acme", nil, bearer(workerTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	var names []string
	for _, g := range resp.JSON200.List {
		names = append(names, g.Name)
	}
	assert.Contains(t, names, "admins")

	// The worker disabled on A: B refuses its token once it heard.
	disabled := pamapi.UserStatus("disabled")
	upd, err := apiA.UpdateServiceUserWithResponse(ctx, "acme", "worker", pamapi.UpdateServiceUserJSONRequestBody{Status: &disabled}, bearer(rootTok))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, upd.StatusCode(), string(upd.Body))
	require.NoError(t, sqldb.Sync(ctx, b.DB))
	me, err := apiB.GetCurrentUserWithResponse(ctx, "acme", bearer(workerTok))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, me.StatusCode(), string(me.Body))
}
