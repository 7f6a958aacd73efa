package sandbox_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/dbopen"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

func TestSandboxWebhooks_TheLogShowsEveryEventAndAttemptOfItsOwnFaxesOnly(t *testing.T) {
	e := start(t, envOptions{})
	a, b := e.pair(t, sandboxapi.CreateSandboxRequest{})
	faxA := e.sendFax(t, a, "+13125550800")
	faxB := e.sendFax(t, b, "+13125550800")
	e.driveUntil(t, b, "B's fax delivered", delivered(faxB.ID.String(), "fax.delivered"))
	page := e.driveUntil(t, a, "A's fax delivered", delivered(faxA.ID.String(), "fax.delivered"))

	inbox := e.urls[stack.Admin] + sandbox.InboxPathOf(a.Id)
	var types []string
	var last int64
	for _, at := range page.Data {
		assert.Equal(t, faxA.ID.String(), at.Event.FaxId, "only A's fax in A's log")
		assert.Greater(t, at.Seq, last, "oldest first")
		last = at.Seq
		types = append(types, at.Event.Type)
		assert.Equal(t, inbox, at.Target, "by default to the sandbox's own inbox")
		require.NotNil(t, at.StatusCode)
		assert.Equal(t, http.StatusNoContent, *at.StatusCode, "the inbox verified the signature")
		assert.True(t, at.Succeeded)
		assert.Nil(t, at.Error)
		assert.Nil(t, at.NextRetryAt)
		assert.Equal(t, 1, at.Attempt)
		assert.Equal(t, sandboxapi.WebhookEventStateDelivered, at.Event.State)
		assert.Equal(t, "application/json", at.Headers["Content-Type"])
		assert.Contains(t, at.Body, `"id":"`+at.Event.Id+`"`)
		e.verify(t, a, at)
	}
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, types)
	assert.Empty(t, page.Pending)
	for _, at := range webhookLog(t, b, 0).Data {
		assert.Equal(t, faxB.ID.String(), at.Event.FaxId, "only B's fax in B's log")
	}

	// Paging: one at a time, each page pointing at the next.
	resp, err := a.api.ListSandboxWebhooksWithResponse(context.Background(), a.Id, &sandboxapi.ListSandboxWebhooksParams{Limit: ptr(1)})
	require.NoError(t, err)
	require.Len(t, resp.JSON200.Data, 1)
	require.NotNil(t, resp.JSON200.NextAfter)
	assert.Equal(t, page.Data[1].Seq, webhookLog(t, a, *resp.JSON200.NextAfter).Data[0].Seq)
	assert.Empty(t, webhookLog(t, a, last).Data)

	// Another sandbox's token sees no such sandbox; bad parameters are 400.
	other, err := b.api.ListSandboxWebhooksWithResponse(context.Background(), a.Id, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, other.StatusCode())
	for _, wait := range []string{"31s", "1y", "-1s"} {
		bad, err := a.api.ListSandboxWebhooksWithResponse(context.Background(), a.Id, &sandboxapi.ListSandboxWebhooksParams{Wait: &wait})
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, bad.StatusCode(), "wait=%s: %s", wait, bad.Body)
	}

	// The inbox refuses a forged delivery, to a sandbox that is gone too
	// (a signed one learns it is gone: TestInbox_AnUnsignedRequest...).
	forged, err := http.Post(inbox, "application/json", strings.NewReader(page.Data[0].Body))
	require.NoError(t, err)
	require.NoError(t, forged.Body.Close())
	assert.Equal(t, http.StatusUnauthorized, forged.StatusCode)
	gone, err := http.Post(e.urls[stack.Admin]+sandbox.InboxPathOf("sbx-0000000000000000"), "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	require.NoError(t, gone.Body.Close())
	assert.Equal(t, http.StatusUnauthorized, gone.StatusCode)
}

func TestSandboxWebhooks_ATestsOwnTargetItsFailuresAndRetries(t *testing.T) {
	e := start(t, envOptions{})
	a := e.create(t, sandboxapi.CreateSandboxRequest{})
	var hits atomic.Int32
	targetURL := e.webhooksTo(t, a, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}), "?secret=s3")
	f := e.sendFax(t, a, "+13125550800")
	page := e.driveUntil(t, a, "fax.queued acknowledged", delivered(f.ID.String(), "fax.queued"))

	require.GreaterOrEqual(t, len(page.Data), 3)
	for i, at := range page.Data[:3] {
		assert.Equal(t, "fax.queued", at.Event.Type)
		assert.Equal(t, i+1, at.Attempt)
		assert.Equal(t, targetURL+"/hooks", at.Target, "the test's URL, its query (a secret) left out")
		e.verify(t, a, at)
		require.NotNil(t, at.StatusCode)
		if i < 2 {
			assert.Equal(t, http.StatusInternalServerError, *at.StatusCode)
			assert.False(t, at.Succeeded)
			require.NotNil(t, at.Error)
			assert.Contains(t, *at.Error, "500")
			require.NotNil(t, at.NextRetryAt, "a failed attempt that is retried says when")
			assert.True(t, at.NextRetryAt.After(at.AttemptedAt))
		} else {
			assert.Equal(t, http.StatusOK, *at.StatusCode)
			assert.True(t, at.Succeeded)
			assert.Nil(t, at.NextRetryAt)
		}
	}
	assert.Equal(t, sandboxapi.WebhookEventStateDelivered, page.Data[2].Event.State)
	assert.Equal(t, 3, page.Data[2].Event.Attempts)
}

func TestSandboxWebhooks_RedeliverAndLongPoll(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, sandboxapi.CreateSandboxRequest{})
	f := e.sendFax(t, a, "+13125550800")
	page := e.driveUntil(t, a, "fax.delivered acknowledged", delivered(f.ID.String(), "fax.delivered"))
	first := page.Data[0]
	last := page.Data[len(page.Data)-1].Seq
	e.clock.Advance(time.Second) // a fresh timestamp for the redelivery; the fax is done

	// A long poll after the last attempt answers once the redelivery's
	// attempt is recorded.
	polled := make(chan *sandboxapi.ListSandboxWebhooksResponse, 1)
	go func() {
		resp, err := a.api.ListSandboxWebhooksWithResponse(ctx, a.Id, &sandboxapi.ListSandboxWebhooksParams{After: &last, Wait: ptr("30s")})
		assert.NoError(t, err)
		polled <- resp
	}()
	id := uuid.MustParse(first.Event.Id)
	resp, err := a.api.RedeliverSandboxWebhookWithResponse(ctx, a.Id, id)
	testkit.Answered(t, http.StatusAccepted, resp, err)
	copyEv := resp.JSON202
	assert.Equal(t, first.Event.Id, copyEv.Id)
	assert.Equal(t, "fax.queued", copyEv.Type)
	require.NotNil(t, copyEv.RedeliveryOf)
	assert.Equal(t, first.Event.Seq, *copyEv.RedeliveryOf)
	assert.NotEqual(t, first.Event.Seq, copyEv.Seq)

	got := <-polled
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	var again *sandboxapi.WebhookAttempt
	for i := range got.JSON200.Data {
		if got.JSON200.Data[i].Event.Seq == copyEv.Seq {
			again = &got.JSON200.Data[i]
		}
	}
	require.NotNil(t, again, "the long poll answered without the redelivery: %+v", got.JSON200.Data)
	assert.Equal(t, first.Event.Id, again.Event.Id)
	assert.True(t, again.Succeeded)
	assert.NotEqual(t, first.Headers[faxwebhook.HeaderSignature], again.Headers[faxwebhook.HeaderSignature], "a fresh signature")
	assert.NotEqual(t, first.Headers[faxwebhook.HeaderTimestamp], again.Headers[faxwebhook.HeaderTimestamp])
	e.verify(t, a, *again)

	// An unknown event, or another sandbox's, is 404.
	missing, err := a.api.RedeliverSandboxWebhookWithResponse(ctx, a.Id, uuid.New())
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, missing.StatusCode())
	foreign, err := b.api.RedeliverSandboxWebhookWithResponse(ctx, b.Id, id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, foreign.StatusCode())

	// A long poll with nothing new answers empty when its wait is over.
	lastNow := got.JSON200.Data[len(got.JSON200.Data)-1].Seq
	short, err := a.api.ListSandboxWebhooksWithResponse(ctx, a.Id, &sandboxapi.ListSandboxWebhooksParams{After: &lastNow, Wait: ptr("50ms")})
	testkit.Answered(t, http.StatusOK, short, err)
	assert.Empty(t, short.JSON200.Data)
}

func TestSandboxWebhooks_ResetEmptiesAndDeleteRemovesTheLog(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	a, b := e.pair(t, sandboxapi.CreateSandboxRequest{})
	fa := e.sendFax(t, a, "+13125550800")
	fb := e.sendFax(t, b, "+13125550800")
	e.driveUntil(t, a, "A's fax.queued", delivered(fa.ID.String(), "fax.queued"))
	e.driveUntil(t, b, "B's fax.queued", delivered(fb.ID.String(), "fax.queued"))
	bBefore := len(webhookLog(t, b, 0).Data)

	reset, err := a.api.ResetSandboxWithResponse(ctx, a.Id)
	testkit.Answered(t, http.StatusOK, reset, err)
	after := webhookLog(t, a, 0)
	assert.Empty(t, after.Data)
	assert.Empty(t, after.Pending)
	assert.GreaterOrEqual(t, len(webhookLog(t, b, 0).Data), bBefore, "B's log untouched")

	// After the reset the application delivers to the inbox again.
	f2 := e.sendFax(t, a, "+13125550800")
	page := e.driveUntil(t, a, "fax.queued after the reset", delivered(f2.ID.String(), "fax.queued"))
	assert.Equal(t, e.urls[stack.Admin]+sandbox.InboxPathOf(a.Id), page.Data[0].Target)

	del, err := a.api.DeleteSandboxWithResponse(ctx, a.Id)
	testkit.Answered(t, http.StatusNoContent, del, err)
	gone, err := e.admin.ListSandboxWebhooksWithResponse(ctx, a.Id, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, gone.StatusCode())
	var n int
	require.NoError(t, e.st.DB(stack.Fax).QueryRow(`SELECT COUNT(*) FROM delivery_attempts WHERE fax_id IN ('`+
		fa.ID.String()+`', '`+f2.ID.String()+`')`).Scan(&n)) // uuids: nothing to quote
	assert.Zero(t, n)
	assert.NotEmpty(t, webhookLog(t, b, 0).Data, "B's log untouched")
}

// postAttempt re-posts a logged attempt to url with its signed headers.
func postAttempt(t testing.TB, url string, a sandboxapi.WebhookAttempt) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(a.Body)))
	require.NoError(t, err)
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

func TestSandboxWebhooks_ALoggedDeliveryVerifiesWhenPostedAgain(t *testing.T) {
	e := start(t, envOptions{})
	a := e.create(t, sandboxapi.CreateSandboxRequest{})
	f := e.sendFax(t, a, "+13125550800")
	page := e.driveUntil(t, a, "fax.queued", delivered(f.ID.String(), "fax.queued"))
	var got []faxwebhook.Event
	h, err := faxwebhook.NewHandler(publicKey(t, a), func(_ context.Context, ev faxwebhook.Event) error {
		got = append(got, ev)
		return nil
	}, faxwebhook.WithClock(e.clock.Now))
	require.NoError(t, err)
	local := httptest.NewServer(h)
	t.Cleanup(local.Close)
	assert.Equal(t, http.StatusNoContent, postAttempt(t, local.URL, page.Data[0]))
	require.Len(t, got, 1)
	assert.Equal(t, page.Data[0].Event.Id, got[0].ID)
	assert.Equal(t, f.ID.String(), got[0].FaxID)
	ts, err := strconv.ParseInt(page.Data[0].Headers[faxwebhook.HeaderTimestamp], 10, 64)
	require.NoError(t, err)
	assert.Equal(t, page.Data[0].AttemptedAt.Unix(), ts)
}

// replica is one stack of several sharing the PostgreSQL database dbURL
// and the master keys in dir; started says whether its workers (the fax
// sender) run.
func replica(t *testing.T, dbURL, dir string, clk *clock.Fake, started bool) *env {
	t.Helper()
	return openEnv(t, stack.Config{
		DataDir: dir, Clock: clk, AdminToken: "adm_replicas", SandboxCreatorToken: "sbc_replicas",
		OpenDB: func(ctx context.Context, m stack.Migrations) (*sql.DB, error) {
			return dbopen.Open(ctx, dbopen.Target{URL: dbURL, DataDir: dir}, dbopen.Schema{Name: m.Schema, SQLite: m.SQLite, Postgres: m.Postgres})
		},
	}, started)
}

func TestSandboxWebhooks_AnotherReplicaAnswersTheLogAndItsLongPoll(t *testing.T) {
	if testdb.Current() != testdb.Postgres {
		t.Skip("replicas share a PostgreSQL database (APISTACK_TEST_BACKEND=postgres)")
	}
	dbURL, dir, clk := testdb.NewDatabase(t), t.TempDir(), clock.NewFake(time.Now())
	ra := replica(t, dbURL, dir, clk, true)
	// B never sends a webhook: whatever its log shows, A recorded.
	rb := replica(t, dbURL, dir, clk, false)
	onA := ra.create(t, sandboxapi.CreateSandboxRequest{})
	onB := rb.open(t, onA.CreatedSandbox)

	polled := make(chan *sandboxapi.ListSandboxWebhooksResponse, 1)
	go func() {
		resp, err := onB.api.ListSandboxWebhooksWithResponse(context.Background(), onA.Id, &sandboxapi.ListSandboxWebhooksParams{Wait: ptr("30s")})
		assert.NoError(t, err)
		polled <- resp
	}()
	f := ra.sendFax(t, onA, "+13125550800")
	got := <-polled
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	require.NotEmpty(t, got.JSON200.Data, "B's long poll answered without A's attempt")
	first := got.JSON200.Data[0]
	assert.Equal(t, f.ID.String(), first.Event.FaxId)
	assert.Equal(t, "fax.queued", first.Event.Type)
	assert.Equal(t, ra.urls[stack.Admin]+sandbox.InboxPathOf(onA.Id), first.Target)
	ra.verify(t, onA, first)

	// Both replicas answer the same log.
	page := ra.driveUntil(t, onA, "fax.delivered", delivered(f.ID.String(), "fax.delivered"))
	assert.Equal(t, page.Data, webhookLog(t, onB, 0).Data)
}

func TestTriggers_InboundFaxArrivesWithItsEvents(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, frozenClock)
	e.receive(t, b)
	resp, err := b.api.TriggerInboundFaxWithResponse(ctx, b.Id, sandboxapi.InboundFaxRequest{Pages: ptr(3)})
	testkit.Answered(t, http.StatusCreated, resp, err)
	in := resp.JSON201
	assert.Equal(t, b.Credentials.Fax.From, in.To, "the sandbox's number by default")
	assert.Equal(t, "+14155550123", in.From)
	assert.Equal(t, 3, in.PageCount)
	id := in.FaxId.String()

	f, err := b.fax.GetFax(ctx, id)
	require.NoError(t, err, "the sandbox's own key sees the fax")
	assert.Equal(t, faxapi.FaxDirectionInbound, faxapi.FaxDirection(f.Direction))
	events := e.inboxUntil(t, b, id, "fax.received")
	assert.Equal(t, []string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, types(events))
	f, err = b.fax.GetFax(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, faxapi.FaxStatusReceived, faxapi.FaxStatus(f.Status))

	// Another sandbox's key does not see it; a failed call is a failed fax.
	other := e.create(t, sandboxapi.CreateSandboxRequest{})
	_, err = other.fax.GetFax(ctx, id)
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	failed := triggerInbound(t, b, sandboxapi.InboundFaxRequest{From: ptr("+13125550199"),
		Outcome: ptr(sandboxapi.InboundFaxRequestOutcomeFailed)})
	assert.Contains(t, types(e.inboxUntil(t, b, failed, "fax.failed")), "fax.failed")

	// Bad triggers answer 400 and make no fax: another sandbox's number,
	// a document that is no PDF, a document and pages together.
	for _, body := range []string{
		`{"to":"` + other.Credentials.Fax.From + `"}`,
		`{"document":"` + "bm90IGEgcGRm" + `"}`,
		`{"document":"` + "bm90IGEgcGRm" + `","pages":2}`,
		`{"pages":0}`,
		`{"from":"12345"}`,
	} {
		r, err := b.api.TriggerInboundFaxWithBodyWithResponse(ctx, b.Id, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, r.StatusCode(), "%s: %s", body, r.Body)
	}
	n := 0
	for _, err := range b.fax.ListFaxes(ctx, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 2, n, "only the two good triggers made faxes")
	// Another sandbox's token cannot trigger into b.
	r, err := other.api.TriggerInboundFaxWithResponse(ctx, b.Id, sandboxapi.InboundFaxRequest{})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, r.StatusCode())
}

// An event whose every try fails is abandoned: the log's attempts of it then
// carry the event abandoned, with when, and it leaves the pending list. The
// sandbox's clock moves the retries on (each wait is at most 1.5 times the
// longest backoff, a minute).
func TestSandboxWebhooks_AnEventEveryTryOfWhichFailsIsAbandoned(t *testing.T) {
	e := start(t, envOptions{})
	a := e.create(t, sandboxapi.CreateSandboxRequest{})
	var hits atomic.Int32
	e.webhooksTo(t, a, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}), "")
	f := e.sendFax(t, a, "+13125550800")

	abandoned := func(p *sandboxapi.WebhookLogPage) *sandboxapi.WebhookAttempt {
		for i, at := range p.Data {
			if at.Event.FaxId == f.ID.String() && at.Event.Type == "fax.queued" && at.Event.State == sandboxapi.WebhookEventStateAbandoned {
				return &p.Data[i]
			}
		}
		return nil
	}
	sawPending := false
	var page *sandboxapi.WebhookLogPage
	require.Eventually(t, func() bool {
		page = webhookLog(t, a, 0)
		for _, ev := range page.Pending {
			if ev.FaxId == f.ID.String() && ev.Type == "fax.queued" {
				sawPending = true
				assert.Equal(t, sandboxapi.WebhookEventStatePending, ev.State)
			}
		}
		if abandoned(page) != nil {
			return true
		}
		e.clock.Advance(2 * time.Minute)
		return false
	}, 30*time.Second, 5*time.Millisecond, "fax.queued of %s never abandoned", f.ID)
	assert.True(t, sawPending, "the event was pending while it was retried")

	at := abandoned(page)
	require.NotNil(t, at.Event.AbandonedAt, "an abandoned event says when")
	assert.Nil(t, at.Event.DeliveredAt)
	assert.Equal(t, 5, at.Event.Attempts, "every try of the webhook URL (no failover URL)")
	assert.False(t, at.Event.AbandonedAt.Before(at.AttemptedAt), "abandoned after its last try")
	assert.GreaterOrEqual(t, int(hits.Load()), 5)
	for _, ev := range page.Pending {
		assert.NotEqual(t, at.Event.Seq, ev.Seq, "an abandoned event is not pending any more")
	}
}
