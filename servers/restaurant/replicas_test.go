package restaurant_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/restaurant"
)

// replica is one restaurant server of several sharing a PostgreSQL schema.
type replica struct {
	srv *restaurant.Server
	url string
	db  *sql.DB
}

// startReplicas starts two restaurant servers on one PostgreSQL schema, as
// two replicas behind a load balancer, both at once (they race to create the
// page-token key), with one fake clock.
func startReplicas(t *testing.T, clk clock.Clock, perSecond, perWindow int) [2]replica {
	t.Helper()
	a, b := testdb.OpenSchemaTwice(t, testdb.Migrations(restaurant.API.Migrations()))
	var out [2]replica
	var errs [2]error
	var wg sync.WaitGroup
	for i, db := range []*sql.DB{a, b} {
		wg.Go(func() {
			out[i].db = db
			out[i].srv, errs[i] = restaurant.New(context.Background(), restaurant.Config{
				Deps: restaurant.Deps{DB: db, Clock: clk, Logger: slog.New(slog.DiscardHandler), ValidateResponses: true, OnResponseViolation: func(r *http.Request, status int, err error) {
					t.Errorf("replica %d: response %d to %s %s breaks the spec: %v", i+1, status, r.Method, r.URL, err)
				}},
				Settings: restaurant.Settings{RatePerSecond: perSecond, RatePerWindow: perWindow},
			})
		})
	}
	wg.Wait()
	for i := range out {
		require.NoError(t, errs[i], "replica %d", i+1)
		h, err := out[i].srv.Handler()
		require.NoError(t, err)
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		out[i].url = hs.URL
	}
	return out
}

// replicaClient is the generated client of the replica at url, validating both
// sides of the wire, with a bearer token when token is not empty.
func replicaClient(t *testing.T, url, token string) *restaurantapi.ClientWithResponses {
	t.Helper()
	rt, err := contract.ForAPI(contract.Restaurant, http.DefaultTransport, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	c, err := restaurantapi.NewClientWithResponses(url, restaurantapi.WithHTTPClient(&http.Client{Transport: rt}),
		restaurantapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			if token != "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
			return nil
		}))
	require.NoError(t, err)
	return c
}

// setUpReplicas creates a restaurant and a client granted it through
// replicas[0] and logs in through replicas[1]: the token works on both.
func setUpReplicas(t *testing.T, replicas [2]replica) (restaurantGUID, token string) {
	t.Helper()
	ctx := context.Background()
	r, err := replicas[0].srv.Operator().CreateRestaurant(ctx, "", "Shared Bistro")
	require.NoError(t, err)
	creds, err := replicas[0].srv.Operator().CreateClient(ctx, "replicated client", []string{r.GUID})
	require.NoError(t, err)
	login, err := replicaClient(t, replicas[1].url, "").LoginWithResponse(ctx, restaurantapi.LoginJSONRequestBody{
		ClientId: creds.ClientID, ClientSecret: creds.ClientSecret, UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, login.StatusCode(), string(login.Body))
	return r.GUID, login.JSON200.Token.AccessToken
}

func TestReplicas_AWalkOfA1000ItemMenuWithPagesFromAlternatingReplicasReturnsEveryItemOnce(t *testing.T) {
	replicas := startReplicas(t, clock.NewFake(t0), 1<<20, 1<<30)
	guid, token := setUpReplicas(t, replicas)
	items := restaurant.PlainItems("Dish", 1000)
	importDoc(t, replicas[1].srv, guid, restaurant.Document{MenuItems: items})

	clients := [2]*restaurantapi.ClientWithResponses{replicaClient(t, replicas[0].url, token), replicaClient(t, replicas[1].url, token)}
	op := opFor(t, "menuItems")
	p := listParams{PageSize: ptr(70)}
	count := map[string]int{}
	pages := 0
	for {
		// Page n comes from replica n mod 2, with the token the other issued.
		status, h, list, err := op.list(context.Background(), clients[pages%2], guid, p)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, "page %d from replica %d", pages+1, pages%2+1)
		pages++
		for _, it := range list {
			count[guidOf(t, it)]++
		}
		next := h.Get("Platform-Next-Page-Token")
		if next == "" {
			break
		}
		p.PageToken = &next
		require.Less(t, pages, 100, "the walk does not end")
	}
	assert.Equal(t, 15, pages, "1,000 items in pages of 70")
	assert.Len(t, count, len(items))
	for _, it := range items {
		assert.Equal(t, 1, count[it.Guid], "item %s returned %d times", it.Guid, count[it.Guid])
	}
}

// replicatedMenu is a restaurant of two replicas whose menu was imported
// through the first, and a client of the second.
type replicatedMenu struct {
	replicas [2]replica
	guid     string
	items    []restaurantapi.MenuItem
	second   *restaurantapi.ClientWithResponses
	op       operation
}

// menuOnReplicas starts two replicas and imports n menu items through the
// first.
func menuOnReplicas(t *testing.T, n int) replicatedMenu {
	t.Helper()
	replicas := startReplicas(t, clock.NewFake(t0), 1<<20, 1<<30)
	guid, token := setUpReplicas(t, replicas)
	items := restaurant.PlainItems("Dish", n)
	importDoc(t, replicas[0].srv, guid, restaurant.Document{MenuItems: items})
	return replicatedMenu{replicas: replicas, guid: guid, items: items,
		second: replicaClient(t, replicas[1].url, token), op: opFor(t, "menuItems")}
}

// archiveFirstItem archives the first menu item through the first replica
// and returns once the second has heard the commit.
func (m replicatedMenu) archiveFirstItem(t *testing.T) {
	t.Helper()
	require.NoError(t, m.replicas[0].srv.Operator().Archive(context.Background(), m.guid, "menuItems", m.items[0].Guid))
	require.NoError(t, sqldb.Sync(context.Background(), m.replicas[1].db))
}

func TestReplicas_AChangeThroughOneReplicaIsListedByTheOtherAtOnce(t *testing.T) {
	m := menuOnReplicas(t, 5)
	guid, items, c, op := m.guid, m.items, m.second, m.op
	list := func() []string {
		status, _, page, err := op.list(context.Background(), c, guid, listParams{})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
		guids := make([]string, 0, len(page))
		for _, it := range page {
			guids = append(guids, guidOf(t, it))
		}
		return guids
	}
	require.Len(t, list(), 5)

	// Replica 2 read the page before replica 1 changed it: a page it kept
	// is dropped once replica 2 heard replica 1's commit.
	m.archiveFirstItem(t)
	got := list()
	assert.Len(t, got, 4)
	assert.NotContains(t, got, items[0].Guid)
}

func TestReplicas_AnEntityChangedThroughOneReplicaIsAnsweredChangedByTheOtherAtOnce(t *testing.T) {
	m := menuOnReplicas(t, 2)
	guid, items, c, op := m.guid, m.items, m.second, m.op
	get := func(item string) int {
		status, _, err := op.get(context.Background(), c, guid, item)
		require.NoError(t, err)
		return status
	}
	require.Equal(t, http.StatusOK, get(items[0].Guid))
	require.Equal(t, http.StatusOK, get(items[0].Guid), "read twice: the second answer may come from replica 2's cache")

	// Replica 2 read the entity before replica 1 archived it: what it kept
	// is dropped once replica 2 heard replica 1's commit.
	m.archiveFirstItem(t)
	assert.Equal(t, http.StatusNotFound, get(items[0].Guid))
	assert.Equal(t, http.StatusOK, get(items[1].Guid))
}

// A login through one replica is announced to no other (only tokens found
// are cached, so no replica can hold the new one's absence): the other
// replica hears nothing and keeps its caches; a token deleted through one
// replica (as a sandbox's reset does) is refused by the other as soon as it
// heard the commit, though it had the token cached.
func TestReplicas_ALoginIsAnnouncedToNoOtherReplicaAndADeletedTokenIsRefusedByIt(t *testing.T) {
	ctx := context.Background()
	replicas := startReplicas(t, clock.NewFake(t0), 1<<20, 1<<30)
	guid, _ := setUpReplicas(t, replicas)
	creds, err := replicas[0].srv.Operator().CreateClient(ctx, "second client", []string{guid})
	require.NoError(t, err)
	login := func() string {
		resp, err := replicaClient(t, replicas[0].url, "").LoginWithResponse(ctx, restaurantapi.LoginJSONRequestBody{
			ClientId: creds.ClientID, ClientSecret: creds.ClientSecret, UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		return resp.JSON200.Token.AccessToken
	}
	token := login()
	list := func() int {
		resp, err := replicaClient(t, replicas[1].url, token).ListMenusWithResponse(ctx, &restaurantapi.ListMenusParams{PlatformRestaurantExternalID: guid})
		require.NoError(t, err)
		return resp.StatusCode()
	}
	require.NoError(t, sqldb.Sync(ctx, replicas[1].db))
	require.Equal(t, http.StatusOK, list(), "replica 2 reads and caches the token")

	heard := sqldb.HeardOn(replicas[1].db)
	for range 5 {
		login()
	}
	require.NoError(t, sqldb.Sync(ctx, replicas[1].db))
	assert.Equal(t, heard, sqldb.HeardOn(replicas[1].db), "a login is not announced")

	_, err = replicas[0].db.ExecContext(ctx, `DELETE FROM tokens WHERE client_id = $1`, creds.ClientID)
	require.NoError(t, err)
	require.NoError(t, sqldb.Sync(ctx, replicas[1].db))
	assert.Equal(t, heard+1, sqldb.HeardOn(replicas[1].db), "a deletion is announced")
	assert.Equal(t, http.StatusUnauthorized, list(), "replica 2 refuses the deleted token it had cached")
}

func TestReplicas_ARateLimitIsSharedExactlyAcrossReplicas(t *testing.T) {
	tests := []struct {
		name                 string
		perSecond, perWindow int
		allowed              int
		wantRetryAfter       string
	}{
		{"per second", 7, 10000, 7, "1"},
		// 5 per 15 minutes: one request every 180 s.
		{"per window", 1000, 5, 5, "180"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The clock stands still: no request is refilled during the test.
			replicas := startReplicas(t, clock.NewFake(t0), tc.perSecond, tc.perWindow)
			guid, token := setUpReplicas(t, replicas)
			const requests, workers = 24, 6
			type answer struct {
				replica, status int
				retryAfter      string
			}
			clients := [2]*restaurantapi.ClientWithResponses{replicaClient(t, replicas[0].url, token), replicaClient(t, replicas[1].url, token)}
			answers := make(chan answer, requests)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for n := w; n < requests; n += workers {
						rc := n % 2
						resp, err := clients[rc].ListMenusWithResponse(context.Background(),
							&restaurantapi.ListMenusParams{PlatformRestaurantExternalID: guid})
						if !assert.NoError(t, err) {
							return
						}
						answers <- answer{replica: rc, status: resp.StatusCode(), retryAfter: resp.HTTPResponse.Header.Get("Retry-After")}
					}
				})
			}
			wg.Wait()
			close(answers)
			ok, limited := 0, 0
			byReplica := [2]int{}
			for a := range answers {
				switch a.status {
				case http.StatusOK:
					ok++
				case http.StatusTooManyRequests:
					limited++
					byReplica[a.replica]++
					assert.Equal(t, tc.wantRetryAfter, a.retryAfter, "replica %d", a.replica+1)
				default:
					t.Errorf("replica %d answered %d", a.replica+1, a.status)
				}
			}
			assert.Equal(t, tc.allowed, ok, "exactly the limit succeeds across both replicas")
			assert.Equal(t, requests-tc.allowed, limited)
			assert.Positive(t, byReplica[0], "replica 1 refuses once the limit is spent")
			assert.Positive(t, byReplica[1], "replica 2 refuses once the limit is spent")
		})
	}
}

// Two replicas started together with --demo both import the demo
// configuration: the imports queue on the database, the second changes
// nothing, and the configuration is stored once.
func TestReplicas_TheSameImportThroughBothReplicasAtOnceIsStoredOnce(t *testing.T) {
	replicas := startReplicas(t, clock.NewFake(t0), 1<<20, 1<<30)
	ctx := context.Background()
	r, err := replicas[0].srv.Operator().CreateRestaurant(ctx, "", "Demo Bistro")
	require.NoError(t, err)
	_, err = replicas[1].srv.Operator().CreateRestaurant(ctx, r.GUID, "Demo Bistro")
	require.ErrorIs(t, err, storeerr.ErrAlreadyExists)
	data, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: 200, Seed: 1}))
	require.NoError(t, err)
	var results [2]restaurant.ImportResult
	var errs [2]error
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() { results[i], errs[i] = replicas[i].srv.Operator().Import(ctx, r.GUID, data) })
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.Equal(t, results[0], results[1])
	for i := range replicas {
		counts, err := replicas[i].srv.Operator().Counts(ctx, r.GUID)
		require.NoError(t, err)
		assert.Equal(t, results[0].Counts, counts, "replica %d", i+1)
	}
	assert.Equal(t, 200, results[0].Counts["menuItems"])
}
