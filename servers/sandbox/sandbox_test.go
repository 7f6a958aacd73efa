package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/tenantapi"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/stack"
)

func TestSandboxes_TwoSandboxesAreIsolatedInEveryAPIAndJournal(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen), Ttl: ptr("30m")})
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	assert.Equal(t, sandboxapi.ClockModeFrozen, a.Clock)
	assert.Equal(t, "30m0s", a.Ttl)
	assert.Equal(t, sandboxapi.ClockModeReal, b.Clock)
	assert.Equal(t, "1h0m0s", b.Ttl)
	assert.WithinDuration(t, a.LastUsedAt.Add(30*time.Minute), a.ExpiresAt, time.Millisecond)
	require.NotEqual(t, a.Credentials, b.Credentials)
	assert.NotEqual(t, a.Credentials.Fax.From, b.Credentials.Fax.From)

	groupA, faxA := e.use(t, a)
	groupB, faxB := e.use(t, b)

	// Nothing of one is visible to the other's credentials, in any API.
	_, err := a.pam.GetGroup(ctx, groupA)
	require.NoError(t, err)
	foreign, err := a.pam.API().GetGroupWithResponse(ctx, b.Credentials.Pam.Team, groupB)
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, foreign.StatusCode(), "A's PAM token on B's team: %s", foreign.Body)
	_, err = a.fax.GetFax(ctx, faxB.ID.String())
	assert.Equal(t, http.StatusNotFound, statusOf(err), "A's fax key reading B's fax: %v", err)
	_, err = b.fax.GetFax(ctx, faxA.ID.String())
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	_, err = a.storage.GetLifecycle(ctx, b.Credentials.Storage.Bucket)
	assert.Equal(t, http.StatusNotFound, statusOf(err), "A's storage key on B's bucket: %v", err)
	_, err = a.restaurant.ForRestaurant(b.Credentials.Restaurant.RestaurantGuid).GetTipWithholding(ctx)
	assert.Equal(t, http.StatusForbidden, statusOf(err), "A's restaurant client on B's restaurant: %v", err)

	// Each journal holds its own requests only, with secrets redacted.
	for _, x := range []struct {
		b       *box
		own     string
		foreign string
	}{{a, a.Id, b.Id}, {b, b.Id, a.Id}} {
		entries := journal(t, x.b, nil)
		apis := map[sandboxapi.JournalEntryApi]int{}
		for _, en := range entries {
			apis[en.Api]++
			if en.Status < 300 {
				assert.NotContains(t, en.Path, x.foreign)
			}
			for _, v := range en.RequestHeaders["Authorization"] {
				assert.Equal(t, apiserver.Redacted, v)
			}
			assert.NotContains(t, en.RequestBody, x.b.Credentials.Pam.KeySecret)
			assert.NotContains(t, en.RequestBody, x.b.Credentials.Restaurant.ClientSecret)
			assert.NotContains(t, en.ResponseBody, "pat_", "a PAM token in a journaled body")
			assert.NotContains(t, en.ResponseBody, "rst_", "a restaurant token in a journaled body")
		}
		for _, api := range []sandboxapi.JournalEntryApi{"pam", "fax", "storage", "restaurant"} {
			assert.Positive(t, apis[api], "%s: no %s request journaled", x.own, api)
		}
		sends := journal(t, x.b, &sandboxapi.ListSandboxRequestsParams{Api: ptr(sandboxapi.ListSandboxRequestsParamsApi("fax")),
			Operation: ptr("SendFax"), Status: ptr(http.StatusAccepted)})
		require.Len(t, sends, 1, x.own)
		assert.Equal(t, "POST", sends[0].Method)
		assert.Contains(t, sends[0].RequestBody, x.b.Credentials.Fax.From[1:])
		assert.Contains(t, sends[0].ResponseBody, `"queued"`)
	}
	// The denied foreign calls above were made with A's credentials.
	denied := journal(t, a, &sandboxapi.ListSandboxRequestsParams{Status: ptr(http.StatusForbidden)})
	assert.Len(t, denied, 2, "A's PAM and restaurant calls on B's tenants")
	hidden := journal(t, a, &sandboxapi.ListSandboxRequestsParams{Api: ptr(sandboxapi.ListSandboxRequestsParamsApi("storage")), Status: ptr(http.StatusNotFound)})
	assert.Len(t, hidden, 1, "A's storage call on B's bucket")

	// A since after everything lists nothing; a page of one points at the next.
	later := e.clock.Now().Add(time.Minute)
	assert.Empty(t, journal(t, a, &sandboxapi.ListSandboxRequestsParams{Since: &later}))
	resp, err := a.api.ListSandboxRequestsWithResponse(ctx, a.Id, &sandboxapi.ListSandboxRequestsParams{Limit: ptr(1)})
	require.NoError(t, err)
	require.Len(t, resp.JSON200.Data, 1)
	require.NotNil(t, resp.JSON200.NextAfter)
	next := journal(t, a, &sandboxapi.ListSandboxRequestsParams{After: resp.JSON200.NextAfter, Limit: ptr(1)})
	require.Len(t, next, 1)
	assert.Greater(t, next[0].Seq, resp.JSON200.Data[0].Seq)
}

func TestSandboxes_TokensControlTheirOwnSandboxOnly(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, sandboxapi.CreateSandboxRequest{})

	status := func(resp interface{ StatusCode() int }, err error) int {
		require.NoError(t, err)
		return resp.StatusCode()
	}
	// A's token on B: as if B did not exist.
	assert.Equal(t, http.StatusNotFound, status(a.api.GetSandboxWithResponse(ctx, b.Id)))
	assert.Equal(t, http.StatusNotFound, status(a.api.ResetSandboxWithResponse(ctx, b.Id)))
	assert.Equal(t, http.StatusNotFound, status(a.api.ListSandboxRequestsWithResponse(ctx, b.Id, nil)))
	assert.Equal(t, http.StatusNotFound, status(a.api.DeleteSandboxWithResponse(ctx, b.Id)))
	// The spec is served beside the operations, to anyone.
	specResp, err := http.Get(e.urls["admin"] + "/sandboxes/openapi.yaml")
	require.NoError(t, err)
	specBody, err := io.ReadAll(specResp.Body)
	require.NoError(t, err)
	require.NoError(t, specResp.Body.Close())
	assert.Equal(t, http.StatusOK, specResp.StatusCode)
	assert.Contains(t, string(specBody), "title: apistack sandbox API")
	// A sandbox token creates nothing; the creator token does nothing else.
	assert.Equal(t, http.StatusForbidden, status(a.api.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{})))
	assert.Equal(t, http.StatusForbidden, status(e.creator.GetSandboxWithResponse(ctx, a.Id)))
	assert.Equal(t, http.StatusForbidden, status(e.creator.ListSandboxRequestsWithResponse(ctx, a.Id, nil)))
	assert.Equal(t, http.StatusForbidden, status(e.creator.DeleteSandboxWithResponse(ctx, a.Id)))
	// No token, or a wrong one: 401.
	assert.Equal(t, http.StatusUnauthorized, status(e.client(t, "").GetSandboxWithResponse(ctx, a.Id)))
	assert.Equal(t, http.StatusUnauthorized, status(e.client(t, "sbt_wrong").GetSandboxWithResponse(ctx, a.Id)))
	// The admin token does everything, on both.
	for _, x := range []*box{a, b} {
		resp, err := e.admin.GetSandboxWithResponse(ctx, x.Id)
		testkit.Answered(t, http.StatusOK, resp, err)
		assert.Equal(t, x.Credentials, resp.JSON200.Credentials)
	}
	assert.Equal(t, http.StatusCreated, status(e.admin.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{})))
	// Its own token: get, then delete; then the token is dead.
	got, err := a.api.GetSandboxWithResponse(ctx, a.Id)
	testkit.Answered(t, http.StatusOK, got, err)
	assert.Equal(t, a.Credentials, got.JSON200.Credentials)
	assert.Equal(t, http.StatusNoContent, status(a.api.DeleteSandboxWithResponse(ctx, a.Id)))
	assert.Equal(t, http.StatusUnauthorized, status(a.api.GetSandboxWithResponse(ctx, a.Id)))
	assert.Equal(t, http.StatusNotFound, status(e.admin.GetSandboxWithResponse(ctx, a.Id)))
	assert.Equal(t, http.StatusOK, status(b.api.GetSandboxWithResponse(ctx, b.Id)))
}

func TestSandboxes_CreateRefusesBadInput(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	before := e.tableCounts(t)
	for name, body := range map[string]string{
		"unknown clock":   `{"clock": "slow"}`,
		"ttl not a time":  `{"ttl": "soon"}`,
		"ttl too short":   `{"ttl": "30s"}`,
		"ttl too long":    `{"ttl": "721h"}`,
		"unknown field":   `{"colour": "blue"}`,
		"not an object":   `[]`,
		"ttl not a text":  `{"ttl": 60}`,
		"clock not given": `{"clock": null}`,
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := e.creator.CreateSandboxWithBodyWithResponse(ctx, "application/json", strings.NewReader(body))
			testkit.Answered(t, http.StatusBadRequest, resp, err)
			require.NotNil(t, resp.JSON400)
			assert.Equal(t, sandboxapi.ErrorErrorInvalidRequest, resp.JSON400.Error)
			assert.NotEmpty(t, resp.JSON400.Message)
		})
	}
	// What is not JSON at all is refused as every API of the stack refuses
	// it: another content type is 415, JSON that does not parse 400.
	for _, x := range []struct {
		contentType, body string
		status            int
	}{
		{"text/plain", "hi", http.StatusUnsupportedMediaType},
		{"application/json", `{"ttl":`, http.StatusBadRequest},
	} {
		resp, err := e.creator.CreateSandboxWithBodyWithResponse(ctx, x.contentType, strings.NewReader(x.body))
		require.NoError(t, err)
		assert.Equal(t, x.status, resp.StatusCode(), x.body)
	}
	assert.Equal(t, before, e.tableCounts(t), "a refused create changes nothing")
	// No body at all is a default sandbox.
	ok, err := e.creator.CreateSandboxWithBodyWithResponse(ctx, "application/json", http.NoBody)
	testkit.Answered(t, http.StatusCreated, ok, err)
	assert.Equal(t, "1h0m0s", ok.JSON201.Ttl)
}

func TestSandboxes_ResetTouchesOneSandboxOnly(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, sandboxapi.CreateSandboxRequest{})
	groupA, faxA := e.use(t, a)
	groupB, faxB := e.use(t, b)
	journalB := journal(t, b, nil)

	resp, err := a.api.ResetSandboxWithResponse(ctx, a.Id)
	testkit.Answered(t, http.StatusOK, resp, err)
	assert.Equal(t, a.Credentials, resp.JSON200.Credentials)

	// A: the same credentials work, what they made is gone, the journal
	// starts again (with the reads below).
	assert.Empty(t, journal(t, a, nil))
	_, err = a.pam.GetGroup(ctx, groupA)
	assert.Equal(t, http.StatusNotFound, statusOf(err), "A's group after the reset: %v", err)
	_, err = a.fax.GetFax(ctx, faxA.ID.String())
	assert.Equal(t, http.StatusNotFound, statusOf(err), "A's fax after the reset: %v", err)
	_, err = a.storage.GetLifecycle(ctx, a.Credentials.Storage.Bucket)
	assert.Equal(t, http.StatusNotFound, statusOf(err), "A's lifecycle after the reset: %v", err)
	groups := 0
	for g, err := range a.pam.ListGroups(ctx, nil) {
		require.NoError(t, err)
		assert.Equal(t, a.Id+"-admins", g.Name)
		groups++
	}
	assert.Equal(t, 1, groups, "the seeded group alone")
	e.use(t, a)

	// B: untouched.
	_, err = b.pam.GetGroup(ctx, groupB)
	require.NoError(t, err)
	f, err := b.fax.GetFax(ctx, faxB.ID.String())
	require.NoError(t, err)
	assert.Equal(t, faxB.ID, f.ID)
	_, err = b.storage.GetLifecycle(ctx, b.Credentials.Storage.Bucket)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(journal(t, b, nil)), len(journalB))
}

func TestSandboxes_DeleteWithAFaxInFlightLeavesNothing(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{}) // stays, its data still
	_, err := b.pam.CreateGroup(ctx, "g-"+b.Id)
	require.NoError(t, err)
	before := e.tableCounts(t)

	a := e.create(t, frozenClock)
	e.use(t, a)
	// Every part holds rows of A: a fault, a clock moved on, a journal and
	// webhook attempts.
	addFault(t, a, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindWebhookDuplicate, Count: ptr(3)})
	slow := e.sendFax(t, a, "+13125550820")
	// Take the fax into flight: A's clock is frozen, so through A's clock.
	advance(t, a, "2s")
	require.NotEmpty(t, webhookLog(t, a, 0).Data)
	mid := e.tableCounts(t)
	for _, table := range []string{"sandbox.sandboxes", "sandbox.faults", "sandbox.journal_batches", "fax.faxes", "fax.outbox", "fax.delivery_attempts"} {
		assert.Greater(t, mid[table], before[table], "%s holds no row of A: the count would not show a leftover", table)
	}
	f, err := a.fax.GetFax(ctx, slow.ID.String())
	require.NoError(t, err)
	require.NotEqual(t, faxapi.FaxStatusQueued, faxapi.FaxStatus(f.Status), "the slow fax never left the queue")
	require.NotEqual(t, faxapi.FaxStatusDelivered, faxapi.FaxStatus(f.Status), "the slow fax is no longer in flight")

	resp, err := a.api.DeleteSandboxWithResponse(ctx, a.Id)
	testkit.Answered(t, http.StatusNoContent, resp, err)
	// Whatever was due runs, then nothing more writes.
	e.clock.Advance(10 * time.Minute)
	e.st.Stop()
	assert.Equal(t, before, e.tableCounts(t), "the deleted sandbox left rows behind")

	// Its credentials stopped working, in every API; B's still work.
	_, err = a.pam.CreateGroup(ctx, "again")
	assert.Equal(t, http.StatusUnauthorized, statusOf(err), "PAM: %v", err)
	_, err = a.fax.GetFax(ctx, slow.ID.String())
	assert.Equal(t, http.StatusUnauthorized, statusOf(err), "fax: %v", err)
	_, err = a.storage.GetLifecycle(ctx, a.Credentials.Storage.Bucket)
	assert.Equal(t, http.StatusForbidden, statusOf(err), "storage: %v", err)
	_, err = a.restaurant.GetTipWithholding(ctx)
	assert.Equal(t, http.StatusUnauthorized, statusOf(err), "restaurant: %v", err)
	_, err = b.pam.GetGroup(ctx, "g-"+b.Id)
	assert.NoError(t, err)
}

func TestSandboxes_ExpireAfterTheirTTLSinceLastUse(t *testing.T) {
	e := start(t, envOptions{sweep: time.Minute})
	ctx := context.Background()
	keep := e.create(t, sandboxapi.CreateSandboxRequest{Ttl: ptr("1h")})
	before := e.tableCounts(t)
	a := e.create(t, sandboxapi.CreateSandboxRequest{Ttl: ptr("10m")})
	e.use(t, a)
	addFault(t, a, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindSlow, Api: apiOf("storage"), Delay: ptr("1ms")})
	advance(t, a, "1m")
	require.NotEmpty(t, webhookLog(t, a, 0).Data)

	// A use 8 minutes in moves the expiry.
	e.clock.Advance(8 * time.Minute)
	_, err := a.pam.GetGroup(ctx, "g-"+a.Id)
	require.NoError(t, err)
	got, err := a.api.GetSandboxWithResponse(ctx, a.Id)
	testkit.Answered(t, http.StatusOK, got, err)
	assert.Equal(t, e.clock.Now().Add(10*time.Minute).Unix(), got.JSON200.ExpiresAt.Unix())
	e.clock.Advance(8 * time.Minute)
	n, err := e.st.Sandboxes.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "used 8 minutes ago, its TTL is 10")

	// Unused past its TTL, the server's own sweep (on the stack's clock)
	// deletes it, and everything of it.
	e.clock.Advance(3 * time.Minute)
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, e.st.DB("sandbox").QueryRow(`SELECT COUNT(*) FROM sandboxes WHERE id = '`+a.Id+`'`).Scan(&n))
		if n > 0 && e.clock.Timers() > 0 {
			// The sweeper re-arms its timer after each sweep: one armed
			// after the last advance fires at the next.
			e.clock.Advance(time.Second)
		}
		return n == 0
	}, 10*time.Second, 5*time.Millisecond, "the sweep never deleted the expired sandbox")
	gone, err := e.admin.GetSandboxWithResponse(ctx, a.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, gone.StatusCode())
	e.st.Stop()
	assert.Equal(t, before, e.tableCounts(t), "the expired sandbox left rows behind")
	resp, err := keep.api.GetSandboxWithResponse(ctx, keep.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode(), "the sandbox within its TTL stays")
}

func TestSandboxes_FiftyInParallelNeverCross(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	const n = 50
	boxes := make([]*box, n)
	faxIDs := make([]string, n)
	faultedAt := func(i int) bool { return i%4 == 1 || i%4 == 2 }
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// Even ones frozen, odd ones real.
			body := sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeReal)}
			if i%2 == 0 {
				body.Clock = ptr(sandboxapi.ClockModeFrozen)
			}
			resp, err := e.creator.CreateSandboxWithResponse(ctx, body)
			if err != nil || resp.StatusCode() != http.StatusCreated {
				errs <- assert.AnError
				t.Errorf("create %d: %v %s", i, err, resp.Body)
				return
			}
			b := e.open(t, resp.JSON201)
			boxes[i] = b
			// Each sandbox makes a group named after itself and sends a fax.
			if _, err := b.pam.CreateGroup(ctx, "own-"+b.Id); err != nil {
				t.Errorf("%s: group: %v", b.Id, err)
				return
			}
			f, err := b.fax.SendFax(ctx, faxapi.SendFaxJSONRequestBody{ConnectionId: b.Credentials.Fax.ConnectionId, From: b.Credentials.Fax.From,
				To: "+13125550800", MediaUrl: e.urls["admin"] + "/fax/sample.pdf"})
			if err != nil {
				t.Errorf("%s: fax: %v", b.Id, err)
				return
			}
			faxIDs[i] = f.ID.String()
			// Half of the frozen ones move their clock on 10 minutes: their
			// fax is delivered when the advance answers.
			if i%4 == 0 {
				d := "10m"
				resp, err := b.api.AdvanceSandboxClockWithResponse(ctx, b.Id, sandboxapi.ClockChange{Advance: &d})
				if err != nil || resp.StatusCode() != http.StatusOK {
					t.Errorf("%s: advance: %v %s", b.Id, err, resp.Body)
					return
				}
			}
			// Half of them (frozen and real) have every GetGroup of theirs
			// fail: no fault crosses to the other half.
			faulted := faultedAt(i)
			if faulted {
				resp, err := b.api.AddSandboxFaultWithResponse(ctx, b.Id, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindInternalError,
					Api: apiOf("pam"), Operation: ptr("GetGroup")})
				if err != nil || resp.StatusCode() != http.StatusCreated {
					t.Errorf("%s: add a fault: %v %s", b.Id, err, resp.Body)
					return
				}
			}
			c := b.Credentials.Pam
			// One try, no retry: the first answer is the one checked.
			once := tenantapi.NewPAM(t, c.BaseUrl, c.Team, c.KeyId, c.KeySecret)
			_, err = once.GetGroup(ctx, "own-"+b.Id)
			if want := map[bool]int{true: http.StatusInternalServerError, false: 0}[faulted]; statusOf(err) != want {
				t.Errorf("%s (faulted %v): GetGroup answered %v, want status %d", b.Id, faulted, err, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	require.Empty(t, errs)
	froms := map[string]bool{}
	for i, b := range boxes {
		require.NotNil(t, b)
		require.False(t, froms[b.Credentials.Fax.From], "two sandboxes share the number %s", b.Credentials.Fax.From)
		froms[b.Credentials.Fax.From] = true
		var names []string
		for g, err := range b.pam.ListGroups(ctx, nil) {
			require.NoError(t, err)
			names = append(names, g.Name)
		}
		assert.ElementsMatch(t, []string{b.Id + "-admins", "own-" + b.Id}, names)
		entries := journal(t, b, nil)
		ops := make([]string, 0, len(entries))
		for _, en := range entries {
			ops = append(ops, en.Operation)
		}
		assert.Equal(t, []string{"IssueServiceToken", "CreateGroup", "SendFax", "IssueServiceToken", "GetGroup", "ListGroups"}, ops, b.Id)
		if len(entries) == len(ops) && len(ops) == 6 {
			assert.Equal(t, map[bool]int{true: http.StatusInternalServerError, false: http.StatusOK}[faultedAt(i)], entries[4].Status, "%s: GetGroup", b.Id)
		}
		if faults := listFaults(t, b); faultedAt(i) {
			require.Len(t, faults, 1, b.Id)
			assert.Equal(t, 1, faults[0].Taken, "%s: its fault took its one GetGroup, and no other sandbox's", b.Id)
		} else {
			assert.Empty(t, faults, b.Id)
		}
		for _, en := range entries {
			if en.Api == "pam" {
				assert.Contains(t, en.Path, b.Id, "a PAM request of another sandbox in %s's journal", b.Id)
			}
			if en.Api == "fax" {
				assert.Contains(t, en.RequestBody, b.Credentials.Fax.From[1:], "a fax of another sandbox in %s's journal", b.Id)
			}
		}
		faxes := 0
		for f, err := range b.fax.ListFaxes(ctx, nil) {
			require.NoError(t, err)
			assert.Equal(t, b.Credentials.Fax.From, f.From)
			faxes++
		}
		assert.Equal(t, 1, faxes, b.Id)
	}

	// Clocks: the advanced frozen ones are 10 minutes ahead of the stack,
	// the other frozen ones where they were made, the real ones on the
	// stack's time; each fax's state follows its own sandbox's clock.
	for i, b := range boxes {
		c := clockOf(t, b)
		switch {
		case i%4 == 0:
			assert.Equal(t, "10m0s", c.Offset, b.Id)
			assert.Equal(t, faxapi.FaxStatusDelivered, faxStatus(t, b, faxIDs[i]), b.Id)
		case i%2 == 0:
			assert.Equal(t, "0s", c.Offset, b.Id)
			assert.Equal(t, b.Now, c.Now, b.Id)
			assert.Equal(t, faxapi.FaxStatusQueued, faxStatus(t, b, faxIDs[i]), b.Id)
		default:
			assert.Equal(t, sandboxapi.ClockModeReal, c.Mode, b.Id)
			assert.Equal(t, "0s", c.Offset, b.Id)
		}
	}
	// The real ones' faxes are delivered as the stack's time passes (a
	// second at a time: a delivery signed before a jump of minutes would be
	// stale at the inbox).
	for i, b := range boxes {
		if i%2 == 1 {
			e.driveUntil(t, b, "the real sandbox's fax delivered", delivered(faxIDs[i], "fax.delivered"))
		}
	}
	// Webhook logs: every attempt is of the sandbox's own fax, to its own
	// inbox; every advanced or real one holds the delivered event.
	for i, b := range boxes {
		page := webhookLog(t, b, 0)
		e.inboxOnly(t, b, page, faxIDs[i])
		if i%4 != 2 {
			assert.True(t, delivered(faxIDs[i], "fax.delivered")(page), "%s: fax.delivered not in its log", b.Id)
		} else {
			// The stack's time and the others' advances never moved it.
			assert.Equal(t, b.Now, clockOf(t, b).Now, b.Id)
			assert.Equal(t, faxapi.FaxStatusQueued, faxStatus(t, b, faxIDs[i]), b.Id)
		}
		for _, p := range page.Pending {
			assert.Equal(t, faxIDs[i], p.FaxId, "%s: another sandbox's pending event", b.Id)
		}
	}
}

func TestSandboxes_ResetBringsEveryPartBackToRightAfterCreation(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, frozenClock)
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
	testkit.Answered(t, http.StatusOK, resp, err)
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

func TestSandboxes_ADeploymentHoldsAtMostMaxSandboxes(t *testing.T) {
	e := start(t, envOptions{maxSandboxes: 4})
	ctx := context.Background()
	// Creates race from many connections (on PostgreSQL, transactions in
	// parallel): exactly the cap is made.
	var wg sync.WaitGroup
	statuses := make([]int, 10)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := e.creator.CreateSandboxWithResponse(ctx, frozenClock)
			require.NoError(t, err)
			statuses[i] = resp.StatusCode()
			if resp.StatusCode() == http.StatusTooManyRequests {
				assert.Contains(t, resp.JSON429.Message, "--max-sandboxes")
			}
		}()
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		if s == http.StatusCreated {
			created++
		} else {
			assert.Equal(t, http.StatusTooManyRequests, s)
		}
	}
	assert.Equal(t, 4, created, "%v", statuses)

	resp, err := e.admin.CreateSandboxWithResponse(ctx, frozenClock)
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode(), string(resp.Body))
	assert.Equal(t, "60", resp.HTTPResponse.Header.Get("Retry-After"))
	require.NotNil(t, resp.JSON429)
	assert.Contains(t, resp.JSON429.Message, "holds its most sandboxes (4, --max-sandboxes)")
	assert.Equal(t, 4, e.tableCounts(t)["sandbox.sandboxes"], "a refused create makes nothing")

	// A delete makes room.
	var id string
	require.NoError(t, e.st.DB(stack.Sandbox).QueryRowContext(ctx, `SELECT id FROM sandboxes LIMIT 1`).Scan(&id))
	del, err := e.admin.DeleteSandboxWithResponse(ctx, id)
	require.NoError(t, err)
	require.Less(t, del.StatusCode(), 300, string(del.Body))
	e.create(t, frozenClock)
}

func TestSandboxes_EachTokenCreatesAtMostItsRateAMinute(t *testing.T) {
	e := start(t, envOptions{createsPerMinute: 2})
	ctx := context.Background()
	e.create(t, frozenClock)
	e.create(t, frozenClock)
	resp, err := e.creator.CreateSandboxWithResponse(ctx, frozenClock)
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode(), string(resp.Body))
	require.NotNil(t, resp.JSON429)
	assert.Contains(t, resp.JSON429.Message, "2 sandboxes a minute")
	assert.Equal(t, "30", resp.HTTPResponse.Header.Get("Retry-After"))
	before := e.tableCounts(t)["sandbox.sandboxes"]

	// Another token has its own rate.
	admin, err := e.admin.CreateSandboxWithResponse(ctx, frozenClock)
	testkit.Answered(t, http.StatusCreated, admin, err)
	assert.Equal(t, before+1, e.tableCounts(t)["sandbox.sandboxes"], "the refused create made nothing")

	// Once the interval passes, the creator may create again.
	e.clock.Advance(30 * time.Second)
	e.create(t, frozenClock)
}
