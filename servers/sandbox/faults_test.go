package sandbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/tenantapi"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/stack"
)

// apiCall is one read of an API through its generated client: the
// operation a fault names and the call. A call is one request, never
// retried: what it answers is what the server sent.
type apiCall struct {
	api, operation string
	call           func(ctx context.Context, b *box) error
}

var apiCalls = []apiCall{
	{"pam", "ListGroups", func(ctx context.Context, b *box) error {
		for _, err := range b.pam.ListGroups(ctx, nil) {
			if err != nil {
				return err
			}
		}
		return nil
	}},
	{"fax", "ListFaxes", func(ctx context.Context, b *box) error {
		for _, err := range b.fax.ListFaxes(ctx, nil) {
			if err != nil {
				return err
			}
		}
		return nil
	}},
	{"storage", "GetLifecycle", func(ctx context.Context, b *box) error {
		_, err := b.storage.GetLifecycle(ctx, b.Credentials.Storage.Bucket)
		return err
	}},
	{"restaurant", "GetTipWithholding", func(ctx context.Context, b *box) error {
		_, err := b.restaurant.GetTipWithholding(ctx)
		return err
	}},
}

// errorBody checks the API's documented error of a fault's answer, which
// a client reads as its typed error: PAM's error name, the fax API's error
// code, the storage API's XML code and request id, the restaurant API's
// message key, an error a client retries.
func errorBody(t *testing.T, api string, status int, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, status, statusOf(err), "%s: %v", api, err)
	var ae *tenantapi.AnswerError
	require.ErrorAs(t, err, &ae)
	switch api {
	case "pam":
		var pe pamapi.Error
		require.NoError(t, json.Unmarshal(ae.Body, &pe), "%s", ae.Body)
		want := map[int]pamapi.ErrorName{429: "too_many_requests", 503: "service_offline", 500: "unknown_error"}[status]
		assert.Equal(t, want, pe.Error)
	case "fax":
		var fe faxapi.Errors
		require.NoError(t, json.Unmarshal(ae.Body, &fe), "%s", ae.Body)
		require.NotEmpty(t, fe.Errors)
		assert.Equal(t, "internal_error", string(fe.Errors[0].Code))
	case "storage":
		var se storageapi.Error
		require.NoError(t, xml.Unmarshal(ae.Body, &se), "%s", ae.Body)
		assert.Equal(t, storageapi.ErrorCodeInternalError, se.Code)
		assert.NotEmpty(t, se.RequestId)
	case "restaurant":
		var re restaurantapi.Error
		require.NoError(t, json.Unmarshal(ae.Body, &re), "%s", ae.Body)
		want := map[int]restaurantapi.ErrorKey{429: "RATE_LIMITED", 503: "INTERNAL_ERROR", 500: "INTERNAL_ERROR"}[status]
		assert.Equal(t, want, re.MessageKey)
		assert.True(t, re.CanRetry || retryableStatus(status), "a client retries it")
		if status == 429 {
			assert.Equal(t, "1", ae.Header.Get("Retry-After"))
		}
	}
}

// retryableStatus is a status a client retries: 429, and 5xx but 501.
func retryableStatus(status int) bool {
	return status == 429 || (status >= 500 && status <= 599 && status != 501)
}

// retryWait checks what a fault's answer tells a client to wait before it
// retries: its Retry-After (the fault's retry_after, one second), or PAM's
// X-RateLimit-Retry-At (Unix seconds on the stack's clock).
func retryWait(t *testing.T, e *env, api string, err error) {
	t.Helper()
	var ae *tenantapi.AnswerError
	require.ErrorAs(t, err, &ae)
	if api == "pam" {
		at, perr := strconv.ParseInt(ae.Header.Get("X-RateLimit-Retry-At"), 10, 64)
		require.NoError(t, perr, "%s: X-RateLimit-Retry-At %v", api, ae.Header)
		assert.Equal(t, e.clock.Now().Add(time.Second).Unix(), at, "%s: a second after the stack's time", api)
		return
	}
	assert.Equal(t, "1", ae.Header.Get("Retry-After"), "%s: Retry-After %v", api, ae.Header)
}

func TestFaults_EveryKindSeenThroughTheClients(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	require.NoError(t, b.storage.PutLifecycle(ctx, b.Credentials.Storage.Bucket, expireTmp))
	for _, c := range apiCalls {
		t.Run(c.api, func(t *testing.T) {
			require.NoError(t, c.call(ctx, b), "no fault yet")
			for _, x := range []struct {
				kind   sandboxapi.FaultKind
				status int
			}{{sandboxapi.FaultKindRateLimited, 429}, {sandboxapi.FaultKindUnavailable, 503}, {sandboxapi.FaultKindInternalError, 500}} {
				// A new second of the restaurant API's real rate limit (20 a
				// second, on the stack's frozen clock).
				e.clock.Advance(time.Second)
				req := sandboxapi.FaultRequest{Kind: x.kind, Api: apiOf(c.api), Operation: &c.operation, Count: ptr(2)}
				if x.status != 500 {
					req.RetryAfter = ptr("1s")
				}
				f := addFault(t, b, req)
				assert.Equal(t, 2, f.Count)
				assert.Regexp(t, `^flt-[0-9a-f]{16}$`, f.Id)
				// Both of the two: the API's documented error, and for a
				// 429 or 503 the wait a retrying client honours.
				for range 2 {
					err := c.call(ctx, b)
					errorBody(t, c.api, x.status, err)
					if x.status != 500 {
						retryWait(t, e, c.api, err)
					}
				}
				faults := listFaults(t, b)
				require.Len(t, faults, 1)
				assert.Equal(t, 2, faults[0].Taken, "%s %s", c.api, x.kind)
				// A client's retry after them comes through.
				require.NoError(t, c.call(ctx, b), "the fault is used up")
				clearFaults(t, b)
			}

			// slow: served, after the delay.
			e.clock.Advance(time.Second)
			addFault(t, b, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindSlow, Api: apiOf(c.api), Operation: &c.operation, Count: ptr(1), Delay: ptr("300ms")})
			start := time.Now()
			require.NoError(t, c.call(ctx, b))
			assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
			clearFaults(t, b)

			// drop: no answer, twice; a client's retry after them comes
			// through.
			addFault(t, b, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindDrop, Api: apiOf(c.api), Operation: &c.operation, Count: ptr(2)})
			for range 2 {
				err := c.call(ctx, b)
				require.Error(t, err)
				assert.Equal(t, -1, statusOf(err), "no answer, so no API error: %v", err)
			}
			require.NoError(t, c.call(ctx, b))
			assert.Equal(t, 2, listFaults(t, b)[0].Taken)
			clearFaults(t, b)
		})
	}

	// Every answer of a fault is in the journal, as the caller saw it.
	entries := journal(t, b, &sandboxapi.ListSandboxRequestsParams{Status: ptr(http.StatusServiceUnavailable)})
	assert.Len(t, entries, 4*2, "two 503s of each API")
	for _, en := range entries {
		assert.NotEmpty(t, en.ResponseHeaders["Retry-After"], en.Operation)
	}
	dropped := 0
	for _, en := range journal(t, b, &sandboxapi.ListSandboxRequestsParams{Limit: ptr(1000)}) {
		if en.Status == 0 {
			dropped++
		}
	}
	assert.Equal(t, 4*2, dropped, "two drops of each API, journaled with status 0")
}

func TestFaults_ShareAndEveryOperation(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	// Clients of their own, not signed in yet.
	once := e.apisOf(t, b)
	// No operation: every request of the API, the token exchange too.
	addFault(t, b, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindUnavailable, Api: apiOf("restaurant")})
	for range 3 {
		_, err := once.restaurant.GetTipWithholding(ctx)
		errorBody(t, "restaurant", 503, err)
	}
	clearFaults(t, b)
	_, err := once.restaurant.GetTipWithholding(ctx)
	require.NoError(t, err)

	// A share takes about that share of the requests.
	f := addFault(t, b, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindInternalError, Api: apiOf("pam"), Operation: ptr("GetGroup"), Share: ptr(0.5)})
	require.NotNil(t, f.Share)
	assert.InDelta(t, 0.5, *f.Share, 1e-9)
	failed := 0
	const n = 60
	for range n {
		if _, err := b.pam.GetGroup(ctx, b.Id+"-admins"); err != nil {
			require.Equal(t, 500, statusOf(err))
			failed++
		}
	}
	assert.InDelta(t, n/2, failed, n/4, "a share of 0.5 took %d of %d", failed, n)
	assert.Equal(t, failed, listFaults(t, b)[0].Taken)
}

func TestFaults_NeverTouchAnotherSandboxOrTheDemoTenants(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, sandboxapi.CreateSandboxRequest{})
	demoCreds, err := e.st.Demo(ctx, stack.Credentials{}, e.urls)
	require.NoError(t, err)
	var creds sandboxapi.Credentials
	raw, err := json.Marshal(demoCreds)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &creds))
	demo := e.apisOf(t, &box{CreatedSandbox: &sandboxapi.CreatedSandbox{Credentials: creds}})
	for _, api := range []string{"pam", "fax", "storage", "restaurant"} {
		addFault(t, a, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindUnavailable, Api: apiOf(api)})
	}
	for _, c := range apiCalls {
		if c.api == "storage" {
			continue // no lifecycle configuration: below
		}
		assert.Equal(t, 503, statusOf(c.call(ctx, a)), "%s: A's own fault", c.api)
		assert.NoError(t, c.call(ctx, b), "%s: B has no fault", c.api)
		assert.NoError(t, c.call(ctx, demo), "%s: the demo tenants have no fault", c.api)
	}
	_, err = a.storage.GetLifecycle(ctx, a.Credentials.Storage.Bucket)
	assert.Equal(t, 503, statusOf(err))
	_, err = b.storage.GetLifecycle(ctx, b.Credentials.Storage.Bucket)
	assert.NotEqual(t, 503, statusOf(err))
	// A's faults are A's: B's token neither lists nor deletes them.
	resp, err := b.api.ListSandboxFaultsWithResponse(ctx, a.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode())
	del, err := b.api.ClearSandboxFaultsWithResponse(ctx, a.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, del.StatusCode())
	assert.Len(t, listFaults(t, a), 4)
	assert.Empty(t, listFaults(t, b))
	// A reset clears them; one deleted by id goes alone.
	f := addFault(t, b, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindSlow, Api: apiOf("pam"), Delay: ptr("250ms")})
	addFault(t, b, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindDrop, Api: apiOf("pam"), Count: ptr(1)})
	listed := listFaults(t, b)
	require.Len(t, listed, 2)
	require.NotNil(t, listed[0].Delay, "a slow fault lists its delay")
	assert.Equal(t, "250ms", *listed[0].Delay)
	one, err := b.api.DeleteSandboxFaultWithResponse(ctx, b.Id, f.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, one.StatusCode())
	again, err := b.api.DeleteSandboxFaultWithResponse(ctx, b.Id, f.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, again.StatusCode())
	left := listFaults(t, b)
	require.Len(t, left, 1)
	assert.Equal(t, sandboxapi.FaultKindDrop, left[0].Kind)
	reset, err := a.api.ResetSandboxWithResponse(ctx, a.Id)
	testkit.Answered(t, http.StatusOK, reset, err)
	assert.Empty(t, listFaults(t, a))
	assert.NoError(t, apiCalls[0].call(ctx, a), "no fault after the reset")
}

func TestFaults_BadDefinitionsAre400AndStoreNothing(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	for _, c := range []struct {
		name, body, field string
	}{
		{"no kind", `{"api":"pam"}`, "kind"},
		{"unknown kind", `{"kind":"explode","api":"pam"}`, "kind"},
		{"unknown api", `{"kind":"slow","api":"mail"}`, "api"},
		{"no api", `{"kind":"unavailable"}`, "api"},
		{"unknown operation", `{"kind":"unavailable","api":"pam","operation":"SendFax"}`, "operation"},
		{"negative count", `{"kind":"unavailable","api":"pam","count":-1}`, "count"},
		{"share above 1", `{"kind":"unavailable","api":"pam","share":1.5}`, "share"},
		{"share 0", `{"kind":"unavailable","api":"pam","share":0}`, "share"},
		{"delay not a duration", `{"kind":"slow","api":"pam","delay":"soon"}`, "delay"},
		{"delay over the cap", `{"kind":"slow","api":"pam","delay":"31s"}`, "delay"},
		{"delay of another kind", `{"kind":"unavailable","api":"pam","delay":"1s"}`, "delay"},
		{"retry_after too short", `{"kind":"rate-limited","api":"pam","retry_after":"10ms"}`, "retry_after"},
		{"retry_after of a 500", `{"kind":"internal-error","api":"pam","retry_after":"1s"}`, "retry_after"},
		{"webhook fault with an api", `{"kind":"webhook-duplicate","api":"fax"}`, "api"},
		{"webhook fault with a share", `{"kind":"webhook-reorder","share":0.5}`, "share"},
		{"attempt of a request fault", `{"kind":"drop","api":"fax","attempt":2}`, "attempt"},
		{"attempt 0", `{"kind":"webhook-fail","attempt":0}`, "attempt"},
		{"unknown field", `{"kind":"drop","api":"fax","typo":1}`, "typo"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := b.api.AddSandboxFaultWithBodyWithResponse(ctx, b.Id, "application/json", strings.NewReader(c.body))
			testkit.Answered(t, http.StatusBadRequest, resp, err)
			require.NotNil(t, resp.JSON400, string(resp.Body))
			assert.Contains(t, resp.JSON400.Message, c.field)
		})
	}
	assert.Empty(t, listFaults(t, b), "nothing stored")
}

func TestFaults_NextNIsExactAcrossTwoStacksOnOneDatabase(t *testing.T) {
	openDB := sharedOpenDB(t)
	first := start(t, envOptions{replica: &replicaOf{openDB: openDB, adminToken: "admin-token", creatorToken: "creator-token", masterKey: fixedKey}})
	second := start(t, envOptions{replica: &replicaOf{openDB: openDB, adminToken: "admin-token", creatorToken: "creator-token", masterKey: fixedKey}})
	ctx := context.Background()
	sb := first.create(t, sandboxapi.CreateSandboxRequest{})
	// The same sandbox through the second stack's URLs.
	viaSecond := *sb.CreatedSandbox
	creds := viaSecond.Credentials
	creds.Pam.BaseUrl, creds.Fax.BaseUrl = second.urls[stack.PAM], second.urls[stack.Fax]
	creds.Storage.Endpoint, creds.Restaurant.BaseUrl = second.urls[stack.Storage], second.urls[stack.Restaurant]
	viaSecond.Credentials = creds
	b2 := second.open(t, &viaSecond)
	clients := []*box{sb, b2}
	// Both replicas know the sandbox has no fault (their caches hold it).
	for _, c := range clients {
		require.NoError(t, apiCalls[0].call(ctx, c))
	}
	const count, requests = 7, 40
	addFault(t, sb, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindUnavailable, Api: apiOf("pam"), Operation: ptr("ListGroups"), Count: ptr(count)})
	require.NoError(t, sqldb.Sync(ctx, second.st.DB(stack.Sandbox)))
	var mu sync.Mutex
	failed, other := 0, []error{}
	var wg sync.WaitGroup
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := apiCalls[0].call(ctx, clients[i%2])
			mu.Lock()
			defer mu.Unlock()
			switch statusOf(err) {
			case 0:
			case 503:
				failed++
			default:
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	require.Empty(t, other)
	assert.Equal(t, count, failed, "exactly count requests failed, across both stacks")
	assert.Equal(t, count, listFaults(t, b2)[0].Taken)
}

// sharedOpenDB opens every API's schema once on the run's PostgreSQL
// server and returns an opener that gives each stack its own pool on it:
// replicas sharing one database. It skips on SQLite.
func sharedOpenDB(t *testing.T) stack.OpenDBFunc {
	t.Helper()
	if testdb.Current() != testdb.Postgres {
		t.Skip("replicas share a PostgreSQL database (APISTACK_TEST_BACKEND=postgres)")
	}
	var mu sync.Mutex
	schemas := map[string][2]string{}
	return func(ctx context.Context, m stack.Migrations) (*sql.DB, error) {
		mu.Lock()
		s, ok := schemas[m.Schema]
		if !ok {
			url, schema := testdb.OpenShared(t, testdb.Migrations(m))
			s = [2]string{url, schema}
			schemas[m.Schema] = s
		}
		mu.Unlock()
		db, err := pgdb.Open(ctx, s[0], s[1], m.Postgres)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = db.Close() })
		return db, nil
	}
}

func fixedKey(api string) ([]byte, error) {
	k := make([]byte, 32)
	copy(k, api)
	return k, nil
}

func TestFaults_WebhookDeliveriesFailDuplicateAndReorder(t *testing.T) {
	e := start(t, envOptions{})
	a, b := e.pair(t, frozenClock)
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

// BenchmarkFaultLookup measures what the sandboxes' faults cost a request
// that no fault takes, at its authentication (Journal.TakeFault): a sandbox
// without faults, and one whose only fault is on another operation (the
// request's operation is then looked up). Both answer from the replica's
// cache, without a query.
func BenchmarkFaultLookup(b *testing.B) {
	e := start(b, envOptions{})
	ctx := context.Background()
	none := e.create(b, sandboxapi.CreateSandboxRequest{})
	other := e.create(b, sandboxapi.CreateSandboxRequest{})
	addFault(b, other, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindUnavailable, Api: apiOf("pam"), Operation: ptr("DeleteGroup")})
	j := e.st.Sandboxes.Journal()
	op := func() string { return "ListGroups" }
	for _, c := range []struct {
		name string
		id   string
	}{{"no-faults", none.Id}, {"fault-on-another-operation", other.Id}, {"demo-tenants", "demo"}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if j.TakeFault(ctx, "pam", c.id, op) != nil {
					b.Fatal("a fault took the request")
				}
			}
		})
	}
}
