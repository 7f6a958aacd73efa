package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
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
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

func TestSandboxClock_AdvanceDeliversOneSandboxsFaxOnly(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, frozenClock)
	e.receive(t, a)
	e.receive(t, b)
	startA, startB := clockOf(t, a), clockOf(t, b)
	assert.Equal(t, sandboxapi.ClockModeFrozen, startA.Mode)
	assert.WithinDuration(t, e.clock.Now(), startA.Now, time.Second)
	assert.Equal(t, startA.Now, a.Now, "the sandbox shows its time")
	faxA := e.sendFax(t, a, "+13125550800")
	faxB := e.sendFax(t, b, "+13125550800")
	assert.Equal(t, startA.Now, faxA.CreatedAt, "a fax is made at its sandbox's time")

	require.Eventually(t, func() bool { return len(inboxOf(b, faxB.ID.String())) == 1 }, 10*time.Second, 5*time.Millisecond,
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
	assert.Equal(t, faxapi.FaxStatusDelivered, faxapi.FaxStatus(f.Status))
	assert.True(t, f.UpdatedAt.After(startA.Now.Add(time.Second)) && !f.UpdatedAt.After(got.Now),
		"the fax's steps were taken in A's time: updated %s", f.UpdatedAt)
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, types(inboxOf(a, faxA.ID.String())))

	// B did not move: its fax is queued, only its fax.queued went out (at
	// the send).
	assert.Equal(t, startB.Now, clockOf(t, b).Now)
	assert.Equal(t, faxapi.FaxStatusQueued, faxStatus(t, b, faxB.ID.String()))
	assert.Equal(t, []string{"fax.queued"}, types(inboxOf(b, faxB.ID.String())))
	// Nor did the stack.
	assert.Equal(t, stackBefore.Add(time.Minute), e.clock.Now())

	// A's GetSandbox shows its time; B's advance by 0s runs B's due work.
	resp, err := a.api.GetSandboxWithResponse(ctx, a.Id)
	testkit.Answered(t, http.StatusOK, resp, err)
	assert.Equal(t, got.Now, resp.JSON200.Now)
	advance(t, b, "0s")
	assert.Equal(t, faxapi.FaxStatusMediaProcessed, faxStatus(t, b, faxB.ID.String()))
	assert.Equal(t, []string{"fax.queued", "fax.media.processed"}, types(inboxOf(b, faxB.ID.String())))
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

	// A real sandbox's work runs by itself as its time passes.
	f := e.sendFax(t, r, "+13125550800")
	assert.Equal(t, c.Now.Truncate(time.Millisecond), f.CreatedAt.Truncate(time.Millisecond), "a fax is made at its sandbox's time")
	e.clock.Advance(10 * time.Second)
	require.Eventually(t, func() bool { return faxStatus(t, r, f.ID.String()) == faxapi.FaxStatusDelivered },
		20*time.Second, 10*time.Millisecond, "the real sandbox's fax was not delivered as its time passed")

	// Set moves a frozen clock to an instant.
	fz := e.create(t, frozenClock)
	to := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	resp, err := fz.api.AdvanceSandboxClockWithResponse(ctx, fz.Id, sandboxapi.ClockChange{Set: &to})
	testkit.Answered(t, http.StatusOK, resp, err)
	assert.Equal(t, to, resp.JSON200.Now)
	assert.Equal(t, to, clockOf(t, fz).Now)
	// A fax sent now is made at that time.
	f = e.sendFax(t, fz, "+13125550800")
	assert.Equal(t, to, f.CreatedAt)
	assert.Equal(t, c.Now.Truncate(time.Hour), clockOf(t, r).Now.Truncate(time.Hour), "the real sandbox did not move")
}

func TestSandboxClock_RefusesBadChangesAndOtherTokens(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, frozenClock)
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
	testkit.Answered(t, http.StatusOK, resp, err)
	assert.Equal(t, before.Now.Add(time.Minute), resp.JSON200.Now)
}

func TestSandboxClock_NeverPassesTheLatestTimeTheAPIsWrite(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	fz := e.create(t, frozenClock)
	limit := sandbox.MaxTime.Format(time.RFC3339)

	// The last instant RFC 3339 writes, and two seconds past it, are refused,
	// naming the limit; nothing changes.
	before := clockOf(t, fz)
	last := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	resp, err := fz.api.AdvanceSandboxClockWithResponse(ctx, fz.Id, sandboxapi.ClockChange{Set: &last})
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode(), string(resp.Body))
	assert.Contains(t, resp.JSON400.Message, limit)
	assert.Equal(t, before.Now, clockOf(t, fz).Now, "a refused change changed nothing")

	// Up to the limit is allowed; a step past it is not.
	resp, err = fz.api.AdvanceSandboxClockWithResponse(ctx, fz.Id, sandboxapi.ClockChange{Set: &sandbox.MaxTime})
	testkit.Answered(t, http.StatusOK, resp, err)
	for _, d := range []string{"2s", "1ns", "2562047h"} {
		resp, err = fz.api.AdvanceSandboxClockWithResponse(ctx, fz.Id, sandboxapi.ClockChange{Advance: &d})
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode(), "advance %s: %s", d, resp.Body)
		assert.Contains(t, resp.JSON400.Message, limit, d)
	}
	assert.Equal(t, sandbox.MaxTime, advance(t, fz, "0s").Now, "0s still runs the work due")

	// Everything still answers at the limit: the clock, the sandbox, its
	// journal and webhook log, and its tenants' APIs (a token exchange
	// included, whose expiry is ahead of now).
	assert.Equal(t, sandbox.MaxTime, clockOf(t, fz).Now)
	get, err := fz.api.GetSandboxWithResponse(ctx, fz.Id)
	testkit.Answered(t, http.StatusOK, get, err)
	_, err = fz.pam.CreateGroup(ctx, "at-the-end-of-time")
	require.NoError(t, err)
	_, err = fz.restaurant.GetTipWithholding(ctx)
	require.NoError(t, err)
	f := e.sendFax(t, fz, "+13125550800")
	assert.Equal(t, sandbox.MaxTime, f.CreatedAt)
	advance(t, fz, "0s")
	faxStatus(t, fz, f.ID.String())
	for _, err := range fz.fax.ListFaxes(ctx, nil) {
		require.NoError(t, err)
	}
	assert.NotEmpty(t, journal(t, fz, nil))
	webhookLog(t, fz, 0)

	// A real clock set near the limit stops at it as the stack's time runs.
	r := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeReal)})
	near := sandbox.MaxTime.Add(-time.Second)
	resp, err = r.api.AdvanceSandboxClockWithResponse(ctx, r.Id, sandboxapi.ClockChange{Set: &near})
	testkit.Answered(t, http.StatusOK, resp, err)
	e.clock.Advance(2 * time.Second)
	assert.Equal(t, sandbox.MaxTime, clockOf(t, r).Now, "a real clock stops at the limit")
	_, err = r.pam.CreateGroup(ctx, "real-at-the-end-of-time")
	require.NoError(t, err)
	d := "1s"
	resp, err = r.api.AdvanceSandboxClockWithResponse(ctx, r.Id, sandboxapi.ClockChange{Advance: &d})
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode(), string(resp.Body))
}

// bearer sets a bearer token on a generated client's requests.
func bearer(token string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

func TestSandboxClock_TokensExpireInTheirSandboxsTime(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, frozenClock)
	advance(t, a, "5h") // A is five hours ahead: its tokens are issued in its time

	pamClient, err := pamapi.NewClientWithResponses(e.urls[stack.PAM])
	require.NoError(t, err)
	restClient, err := restaurantapi.NewClientWithResponses(e.urls[stack.Restaurant])
	require.NoError(t, err)
	type tokens struct{ pam, restaurant string }
	issue := func(x *box) tokens {
		c := x.Credentials
		p, err := pamClient.IssueServiceTokenWithResponse(ctx, c.Pam.Team, pamapi.ServiceTokenRequest{KeyId: c.Pam.KeyId, KeySecret: c.Pam.KeySecret})
		testkit.Answered(t, http.StatusOK, p, err)
		assert.Equal(t, clockOf(t, x).Now.Add(time.Hour), p.JSON200.ExpiresAt, "the PAM token expires an hour after its sandbox's now")
		r, err := restClient.LoginWithResponse(ctx, restaurantapi.AuthenticationRequest{ClientId: c.Restaurant.ClientId,
			ClientSecret: c.Restaurant.ClientSecret, UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})
		testkit.Answered(t, http.StatusOK, r, err)
		return tokens{pam: p.JSON200.BearerToken, restaurant: r.JSON200.Token.AccessToken}
	}
	use := func(x *box, tk tokens) (pamStatus, restaurantStatus int) {
		p, err := pamClient.ListGroupsWithResponse(ctx, x.Credentials.Pam.Team, nil, bearer(tk.pam))
		require.NoError(t, err)
		r, err := restClient.GetTipWithholdingWithResponse(ctx, &restaurantapi.GetTipWithholdingParams{
			PlatformRestaurantExternalID: x.Credentials.Restaurant.RestaurantGuid}, bearer(tk.restaurant))
		require.NoError(t, err)
		return p.StatusCode(), r.StatusCode()
	}
	ta, tb := issue(a), issue(b)

	advance(t, a, "59m59s")
	p, r := use(a, ta)
	assert.Equal(t, []int{http.StatusOK, http.StatusOK}, []int{p, r}, "a second before A's tokens expire")
	advance(t, a, "1s")
	p, r = use(a, ta)
	assert.Equal(t, []int{http.StatusUnauthorized, http.StatusUnauthorized}, []int{p, r}, "A's tokens expired in A's time")
	p, r = use(b, tb)
	assert.Equal(t, []int{http.StatusOK, http.StatusOK}, []int{p, r}, "B's tokens did not")

	// The ergonomic clients get a new token and go on.
	_, err = a.pam.CreateGroup(ctx, "after-expiry")
	require.NoError(t, err)
	_, err = a.restaurant.GetTipWithholding(ctx)
	require.NoError(t, err)
}

func TestSandboxClock_RateLimitWindowsPassInTheirSandboxsTime(t *testing.T) {
	e := start(t, envOptions{pamRateLimit: 3})
	ctx := context.Background()
	// A TTL (stack time) beyond the stack's hour below.
	a := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen), Ttl: ptr("3h")})
	b := e.create(t, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen), Ttl: ptr("3h")})
	// Spend each sandbox user's allowance (the token exchange spends one).
	spend := func(x *box) int {
		for n := 0; n < 10; n++ {
			_, err := x.pam.GetGroup(ctx, "none")
			if statusOf(err) == http.StatusTooManyRequests {
				return n
			}
			require.Equal(t, http.StatusNotFound, statusOf(err), "%v", err)
		}
		t.Fatalf("%s: no 429 after 10 requests", x.Id)
		return 0
	}
	assert.Equal(t, 2, spend(a))
	assert.Equal(t, 2, spend(b))

	// The stack's hour passing frees neither.
	e.clock.Advance(time.Hour)
	_, err := a.pam.GetGroup(ctx, "none")
	assert.Equal(t, http.StatusTooManyRequests, statusOf(err), "%v", err)

	// A's hour frees A's user only.
	advance(t, a, "1h")
	_, err = a.pam.GetGroup(ctx, "none")
	assert.Equal(t, http.StatusNotFound, statusOf(err), "%v", err)
	_, err = b.pam.GetGroup(ctx, "none")
	assert.Equal(t, http.StatusTooManyRequests, statusOf(err), "%v", err)
}

// flakyReceiver answers 500 to its first fails requests, then 204, and
// keeps what it was sent.
type flakyReceiver struct {
	mu    sync.Mutex
	fails int
	got   []string // "event_type/attempt status"
}

func (f *flakyReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var env struct {
		Data struct {
			EventType string `json:"event_type"`
		} `json:"data"`
		Meta struct {
			Attempt int `json:"attempt"`
		} `json:"meta"`
	}
	_ = json.NewDecoder(r.Body).Decode(&env)
	f.mu.Lock()
	defer f.mu.Unlock()
	status := http.StatusNoContent
	if f.fails > 0 {
		f.fails--
		status = http.StatusInternalServerError
	}
	f.got = append(f.got, fmt.Sprintf("%s/%d %d", env.Data.EventType, env.Meta.Attempt, status))
	w.WriteHeader(status)
}

func (f *flakyReceiver) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

func TestSandboxClock_WebhookRetriesWaitForTheSandboxsClock(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	recv := &flakyReceiver{fails: 2}
	hs := httptest.NewServer(recv)
	t.Cleanup(hs.Close)
	require.NoError(t, e.st.Fax.AllowDestinations(hs.URL))
	a := e.create(t, frozenClock)
	_, err := a.fax.UpdateApplication(ctx, a.Credentials.Fax.ConnectionId, faxapi.UpdateFaxApplicationJSONRequestBody{WebhookUrl: &hs.URL})
	require.NoError(t, err)
	f := e.sendFax(t, a, "+13125550800")

	// The fax.queued event fails its first try, at the send; its retry waits
	// for A's clock (the backoff starts at 1s).
	require.Eventually(t, func() bool { return len(recv.seen()) == 1 }, 10*time.Second, 5*time.Millisecond)
	// Ten minutes in A: the steps are taken, the retry fails again and the
	// next one is due later in A's time; the events after it wait their turn.
	advance(t, a, "10m")
	assert.Equal(t, faxapi.FaxStatusDelivered, faxStatus(t, a, f.ID.String()))
	assert.Equal(t, []string{"fax.queued/1 500", "fax.queued/2 500"}, recv.seen())
	// A minute more: the third try succeeds, and the rest follow in order.
	advance(t, a, "1m")
	assert.Equal(t, []string{"fax.queued/1 500", "fax.queued/2 500", "fax.queued/3 204",
		"fax.media.processed/1 204", "fax.sending.started/1 204", "fax.delivered/1 204"}, recv.seen())
}

func TestSandboxes_AFrozenSandboxHoursAheadDeliversToItsInboxAndJournalsBothTimes(t *testing.T) {
	e := start(t, envOptions{})
	a := e.create(t, frozenClock)
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

// advanceFaxes is how many faxes BenchmarkSandboxAdvance has in flight.
const advanceFaxes = 100

// BenchmarkSandboxAdvance measures an advance of a frozen sandbox with 100
// faxes queued to a normal test number: the time from POST
// /sandboxes/{id}/clock {"advance": "10m"} until it answers, by which every
// fax is delivered and every one of their events delivered to the inbox
// (checked after each run: none pending). It reports the median and the
// 90th percentile (target: under 1 s), on the run's backend.
func BenchmarkSandboxAdvance(b *testing.B) {
	e := start(b, envOptions{})
	ctx := context.Background()
	var took []time.Duration
	for b.Loop() {
		sb := e.create(b, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for range advanceFaxes {
			wg.Add(1)
			sem <- struct{}{}
			go func() { defer func() { <-sem; wg.Done() }(); e.sendFax(b, sb, "+13125550800") }()
		}
		wg.Wait()
		d := "10m"
		t0 := time.Now()
		resp, err := sb.api.AdvanceSandboxClockWithResponse(ctx, sb.Id, sandboxapi.ClockChange{Advance: &d})
		took = append(took, time.Since(t0))
		testkit.Answered(b, http.StatusOK, resp, err)
		pending, delivered := events(b, e, sb.Id)
		require.Equal(b, 0, pending, "events not delivered when the advance answered")
		require.Equal(b, 4*advanceFaxes, delivered)
	}
	slices.Sort(took)
	b.ReportMetric(ms(took[len(took)/2]), "ms-median")
	b.ReportMetric(ms(took[len(took)*9/10]), "ms-p90")
}

// events counts the pending and the delivered events of the faxes of
// sandbox id.
func events(t testing.TB, e *env, id string) (pending, delivered int) {
	t.Helper()
	// id is a sandbox id (sbx- and hex), safe to quote.
	err := e.st.DB(stack.Fax).QueryRow(fmt.Sprintf(`SELECT
		COALESCE(SUM(CASE WHEN o.delivered_at IS NULL AND o.abandoned_at IS NULL THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN o.delivered_at IS NOT NULL THEN 1 ELSE 0 END), 0)
		FROM outbox AS o JOIN faxes AS f ON f.id = o.fax_id JOIN accounts AS a ON a.id = f.account_id
		WHERE a.name = '%s'`, id)).Scan(&pending, &delivered)
	require.NoError(t, err)
	return pending, delivered
}
