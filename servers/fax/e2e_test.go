package fax

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/faxwebhooks"
	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/fax/internal/pdflimit"
	"github.com/apistack/apistack/servers/fax/internal/pdftest"
	"github.com/apistack/apistack/servers/internal/heaptest"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testkit"
)

func TestSend_EveryOutboundEventArrivesVerifiedAndInOrder(t *testing.T) {
	h, r := newReceivingHarness(t)

	id := h.send("+14155550123")
	evs := r.waitFor(id, "fax.delivered")

	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, r.typesOf(id))
	for _, e := range evs {
		assert.Equal(t, 1, e.Attempt, e.Type)
		assert.Equal(t, r.url, e.DeliveredTo)
	}
	d, ok := evs[3].Value.(faxwebhooks.FaxDeliveredEvent)
	require.True(t, ok)
	assert.Equal(t, 3, d.Payload.PageCount)
	assert.Equal(t, faxwebhooks.FaxStatusDelivered, d.Payload.Status)
	assert.Equal(t, h.acct, d.Payload.UserId)
	assert.Equal(t, h.from, d.Payload.From)

	got := getFax(t, h.api, id)
	assert.Equal(t, faxapi.FaxStatusDelivered, got.Status)
	assert.Equal(t, 3, *got.PageCount)
}

func TestSend_EachTestNumberProducesItsOutcome(t *testing.T) {
	h, r := newReceivingHarness(t)

	for _, tn := range OutcomeNumbers() {
		t.Run(tn.To+" "+tn.Outcome, func(t *testing.T) {
			id := h.send(tn.To)
			switch tn.FailsWhile {
			case "originating":
				evs := r.waitFor(id, "fax.failed")
				assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.failed"}, r.typesOf(id))
				f := evs[len(evs)-1].Value.(faxwebhooks.FaxFailedEvent)
				assert.Equal(t, tn.Outcome, string(f.Payload.FailureReason))
			case "sending":
				evs := r.waitFor(id, "fax.failed")
				assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.failed"}, r.typesOf(id))
				f := evs[len(evs)-1].Value.(faxwebhooks.FaxFailedEvent)
				assert.Equal(t, tn.Outcome, string(f.Payload.FailureReason))
			default:
				r.waitFor(id, "fax.delivered")
				assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, r.typesOf(id))
			}
		})
	}
}

func TestSend_SlowNumberSpendsTenStepsSending(t *testing.T) {
	h, r := newReceivingHarness(t, func(c *Config) { c.StepInterval = 10 * time.Millisecond; c.Clock = nil })

	slow, normal := h.send("+13125550820"), h.send("+13125550800")
	evs := r.waitFor(slow, "fax.delivered")
	nevs := r.waitFor(normal, "fax.delivered")
	slowSending := evs[3].OccurredAt.Sub(evs[2].OccurredAt)
	normalSending := nevs[3].OccurredAt.Sub(nevs[2].OccurredAt)
	assert.GreaterOrEqual(t, slowSending, 10*h.cfg.StepInterval)
	assert.Greater(t, slowSending, normalSending)
	slowDone := evs[3].Value.(faxwebhooks.FaxDeliveredEvent)
	normalDone := nevs[3].Value.(faxwebhooks.FaxDeliveredEvent)
	assert.Greater(t, slowDone.Payload.CallDurationSecs, normalDone.Payload.CallDurationSecs)
}

func TestSend_DocumentProblemsFailWithTheirReason(t *testing.T) {
	h, r := newReceivingHarness(t)
	tests := []struct {
		name, path string
		want       faxwebhooks.FaxFailureReason
	}{
		{"not a PDF", "/not-a-pdf.txt", faxwebhooks.FaxFailureReasonFileFormatInvalid},
		{"over 350 pages", "/too-many-pages.pdf", faxwebhooks.FaxFailureReasonPageCountLimitExceeded},
		{"download fails", "/missing.pdf", faxwebhooks.FaxFailureReasonFileDownloadFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := h.sendDoc("+14155550123", h.docs.URL+tt.path, false)
			evs := r.waitFor(id, "fax.failed")
			assert.Equal(t, []string{"fax.queued", "fax.failed"}, r.typesOf(id))
			assert.Equal(t, tt.want, evs[1].Value.(faxwebhooks.FaxFailedEvent).Payload.FailureReason)
		})
	}
}

func TestCancel_FailsTheFaxWithUserCancelled(t *testing.T) {
	// Steps a minute apart: the fax waits in queued until it is cancelled.
	h, r := newReceivingHarness(t, func(c *Config) { c.StepInterval = time.Minute })
	ctx := context.Background()

	id := h.send("+13125550800")
	// Let the first step (queued -> media.processed) happen, then cancel. The
	// harness moves its clock on to the simulator's waits, so the step may
	// follow fax.queued before the receiver is looked at: wait for the step
	// (the order of every event is checked below).
	r.waitFor(id, "fax.media.processed")
	resp, err := h.api.CancelFaxWithResponse(ctx, uuid.MustParse(id))
	testkit.Answered(t, http.StatusOK, resp, err)
	assert.Equal(t, faxapi.FaxStatusFailed, resp.JSON200.Data.Status)
	assert.Equal(t, faxapi.FaxFailureReasonUserCancelled, *resp.JSON200.Data.FailureReason)

	evs := r.waitFor(id, "fax.failed")
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.failed"}, r.typesOf(id))
	assert.Equal(t, faxwebhooks.FaxFailureReasonUserCancelled, evs[2].Value.(faxwebhooks.FaxFailedEvent).Payload.FailureReason)

	again, err := h.api.CancelFaxWithResponse(ctx, uuid.MustParse(id))
	testkit.Answered(t, http.StatusUnprocessableEntity, again, err)
	assert.Equal(t, faxapi.ErrorCodeInvalidState, again.JSON422.Errors[0].Code)
}

func TestDelete_EmitsFaxDeletedAndHidesTheFax(t *testing.T) {
	h, r := newReceivingHarness(t)
	ctx := context.Background()

	id := h.send("+14155550123")
	r.waitFor(id, "fax.delivered")
	del, err := h.api.DeleteFaxWithResponse(ctx, uuid.MustParse(id))
	testkit.Answered(t, http.StatusNoContent, del, err)
	r.waitFor(id, "fax.deleted")

	got, err := h.api.GetFaxWithResponse(ctx, uuid.MustParse(id))
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, got.StatusCode())
	list, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{})
	require.NoError(t, err)
	assert.Empty(t, list.JSON200.Data)
}

func TestDelete_OfAFaxInProgressIsRefused(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.StepInterval = time.Hour })
	id := h.send("+14155550123")
	del, err := h.api.DeleteFaxWithResponse(context.Background(), uuid.MustParse(id))
	testkit.Answered(t, http.StatusUnprocessableEntity, del, err)
	assert.Equal(t, faxapi.ErrorCodeInvalidState, del.JSON422.Errors[0].Code)
}

func TestInbound_InjectedFaxWalksToReceivedWithASignedLink(t *testing.T) {
	h, r := newReceivingHarness(t)
	ctx := context.Background()
	doc := makePDF(2)

	id, err := h.srv.Operator().InjectInbound(ctx, InboundFax{From: "+14155550123", To: h.from, Document: doc, Outcome: InboundPartial, CallDurationSecs: 42})
	require.NoError(t, err)
	evs := r.waitFor(id, "fax.received")
	assert.Equal(t, []string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, r.typesOf(id))
	rec := evs[2].Value.(faxwebhooks.FaxReceivedEvent).Payload
	assert.Equal(t, 2, rec.PageCount)
	assert.True(t, rec.PartialContent)
	assert.Equal(t, 42, rec.CallDurationSecs)
	assert.Equal(t, faxwebhooks.FaxDirectionInbound, rec.Direction)

	resp, err := http.Get(rec.MediaUrl)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/pdf", resp.Header.Get("Content-Type"))
}

func TestInbound_SenderHangingUpFailsWithSenderCallDropped(t *testing.T) {
	h, r := newReceivingHarness(t)
	id, err := h.srv.Operator().InjectInbound(context.Background(), InboundFax{From: "+14155550123", To: h.from, Document: makePDF(1), Outcome: InboundSenderCallDropped})
	require.NoError(t, err)
	evs := r.waitFor(id, "fax.failed")
	assert.Equal(t, []string{"fax.receiving.started", "fax.failed"}, r.typesOf(id))
	assert.Equal(t, faxwebhooks.FaxFailureReasonSenderCallDropped, evs[1].Value.(faxwebhooks.FaxFailedEvent).Payload.FailureReason)
}

func TestDelivery_ReceiverFailingThenSucceedingCountsAttempts(t *testing.T) {
	h, r := newReceivingHarness(t)
	r.failFirst("fax.queued", 2)
	id := h.send("+14155550123")
	evs := r.waitFor(id, "fax.delivered")
	require.Equal(t, "fax.queued", evs[0].Type)
	assert.Equal(t, 3, evs[0].Attempt, "two 500s, then the third attempt")
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, r.typesOf(id),
		"later events wait for the retried one")
}

func TestDelivery_ReceiverDownGoesToTheFailoverURL(t *testing.T) {
	h := newHarness(t)
	failover := newReceiver(t, h)
	h.useReceivers("http://127.0.0.1:9/", failover.url) // port 9 (discard) refuses connections

	id := h.send("+14155550123")
	evs := failover.waitFor(id, "fax.delivered")
	assert.Equal(t, 4, evs[0].Attempt, "three attempts on the webhook URL, then the failover")
	assert.Equal(t, failover.url, evs[0].DeliveredTo)
}

func TestDelivery_SlowReceiverTimesOutAndIsRetried(t *testing.T) {
	h, r := newReceivingHarness(t, func(c *Config) { c.WebhookTimeout = 100 * time.Millisecond })
	var slowOnce atomic.Bool
	r.setBehaviour(func(e faxwebhook.Event) error {
		if e.Type == "fax.queued" && slowOnce.CompareAndSwap(false, true) {
			time.Sleep(300 * time.Millisecond)
		}
		return nil
	})
	id := h.send("+14155550123")
	evs := r.waitFor(id, "fax.delivered")
	// The slow first attempt may still be recorded by the receiver after the
	// sender gave up on it: at least once means a duplicate is allowed.
	var queued []int
	for _, e := range evs {
		if e.Type == "fax.queued" {
			queued = append(queued, e.Attempt)
		}
	}
	assert.Contains(t, queued, 2, "the timed-out attempt was retried")
}

func TestDelivery_EventsPendingAtAKillAreDeliveredAfterRestart(t *testing.T) {
	// Retries go on long enough that nothing is abandoned before the kill.
	h := newHarness(t, func(c *Config) { c.WebhookAttempts = 1000; c.WebhookBackoff = 20 * time.Millisecond })
	r := newReceiver(t, h)
	h.useReceivers("http://127.0.0.1:9/", "")
	// Nothing can be delivered now: the events pile up in the outbox.
	id := h.send("+14155550123")
	require.Eventually(t, func() bool {
		got, err := h.api.GetFaxWithResponse(context.Background(), uuid.MustParse(id))
		return err == nil && got.JSON200 != nil && got.JSON200.Data.Status == faxapi.FaxStatusDelivered
	}, 10*time.Second, 10*time.Millisecond)
	h.stop()

	// Point the events at the receiver, as an operator fixing the URL and
	// the process restarting would.
	db := sqldb.New(h.reopen(), sqldb.Options{})
	_, err := db.ExecContext(context.Background(), `UPDATE outbox SET webhook_url = ?`, r.url)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	h.start()
	r.waitFor(id, "fax.delivered")
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, r.typesOf(id))
	require.Eventually(t, func() bool {
		pending, _, _, err := h.srv.Operator().WebhookStats(context.Background())
		return err == nil && pending == 0
	}, 5*time.Second, 10*time.Millisecond)
}

func TestCancel_RacingTheSimulatorStillCancelsAFaxInProgress(t *testing.T) {
	// Steps back to back: the simulator moves each fax on (queued ->
	// media.processed -> originated -> sending) while it is being cancelled.
	h, _ := newReceivingHarness(t)
	ctx := context.Background()

	for range 15 {
		sent, err := h.api.SendFaxWithResponse(ctx, faxapi.SendFaxJSONRequestBody{
			ConnectionId: h.app, To: "+13125550820", From: h.from, MediaUrl: h.docs.URL + "/3-pages.pdf",
		})
		testkit.Answered(t, http.StatusAccepted, sent, err)
		id := sent.JSON202.Data.Id
		cancelled, err := h.api.CancelFaxWithResponse(ctx, id)
		require.NoError(t, err)
		if cancelled.StatusCode() == http.StatusOK {
			assert.Equal(t, faxapi.FaxFailureReasonUserCancelled, *cancelled.JSON200.Data.FailureReason)
			continue
		}
		// Only a fax that is no longer in progress may refuse the cancel.
		require.Equal(t, http.StatusUnprocessableEntity, cancelled.StatusCode(), string(cancelled.Body))
		got, err := h.api.GetFaxWithResponse(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, faxapi.FaxStatusDelivered, got.JSON200.Data.Status,
			"cancel refused a fax in progress: %s", cancelled.Body)
	}
}

func TestInbound_TheDocumentIsLinkedOnlyOnceTheFaxIsReceived(t *testing.T) {
	h, r := newReceivingHarness(t, func(c *Config) { c.StepInterval = time.Hour })
	ctx := context.Background()

	id, err := h.srv.Operator().InjectInbound(ctx, InboundFax{From: "+14155550123", To: h.from, Document: makePDF(2), Outcome: InboundReceived})
	require.NoError(t, err)
	r.waitFor(id, "fax.media.processing.started")

	// The PDF is still being generated: fax.received brings its link.
	got := getFax(t, h.api, id)
	require.Equal(t, faxapi.FaxStatusMediaProcessing, got.Status)
	assert.Nil(t, got.MediaUrl, "no link to a PDF that is not ready")
	refreshed, err := h.api.RefreshFaxWithResponse(ctx, uuid.MustParse(id))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnprocessableEntity, refreshed.StatusCode(), "nothing to refresh before the fax is received")

	h.clock.Advance(time.Hour)
	r.waitFor(id, "fax.received")
	got = getFax(t, h.api, id)
	require.Equal(t, faxapi.FaxStatusReceived, got.Status)
	require.NotNil(t, got.MediaUrl)
	refreshed, err = h.api.RefreshFaxWithResponse(ctx, uuid.MustParse(id))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, refreshed.StatusCode())
}

func TestDelivery_ARedirectIsNotAnAcknowledgementAndIsNotFollowed(t *testing.T) {
	// A plain client: the contract transport would refuse the 302 itself.
	h := newHarness(t, func(c *Config) { c.WebhookTransport = nil })
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("GET /elsewhere", func(w http.ResponseWriter, _ *http.Request) {
		followed.Add(1)
		w.WriteHeader(http.StatusOK)
	})
	redirecting := httptest.NewServer(mux)
	t.Cleanup(redirecting.Close)
	failover := newReceiver(t, h)
	h.useReceivers(redirecting.URL+"/", failover.url)

	id := h.send("+14155550123")
	evs := failover.waitFor(id, "fax.delivered")
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, failover.typesOf(id),
		"a 302 is not a 2xx: every event goes on to the failover URL")
	assert.Equal(t, 4, evs[0].Attempt, "three attempts on the redirecting URL, then the failover")
	assert.Zero(t, followed.Load(), "the sender never follows a redirect")
}

func TestNewEvent_OccurredAtAlwaysHasSixFractionalDigits(t *testing.T) {
	h := newHarness(t)
	f := faxRow{ID: uuid.NewString(), AccountID: h.acct, ConnectionID: h.app, Direction: "outbound",
		From: h.from, To: "+14155550123", Status: string(faxapi.FaxStatusQueued)}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 10, 47, 34, 0, time.UTC), "2026-11-22T10:47:34.000000Z"},
		{time.Date(2026, 11, 22, 10, 47, 34, 620_000_000, time.UTC), "2026-11-22T10:47:34.620000Z"},
		{time.Date(2026, 11, 22, 10, 47, 34, 622_130_999, time.UTC), "2026-11-22T10:47:34.622130Z"},
		{time.Date(2026, 11, 22, 11, 47, 34, 5_000, time.FixedZone("CET", 3600)), "2026-11-22T10:47:34.000005Z"},
	} {
		ev, err := h.srv.newEvent(f, eventQueued, tc.at)
		require.NoError(t, err)
		var data struct {
			OccurredAt string `json:"occurred_at"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &data), string(ev.Data))
		assert.Equal(t, tc.want, data.OccurredAt)
	}
}

func TestSend_APDFBombFailsTheFaxInBoundedMemoryAndOthersGoThrough(t *testing.T) {
	h, r := newReceivingHarness(t)
	// Four object streams of 256 MiB of spaces each: about 6.5 MB on the wire.
	bomb := pdftest.Bomb(4, 256<<20)
	require.Less(t, len(bomb), MaxMediaBytes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(bomb)
	}))
	t.Cleanup(srv.Close)

	stop := heaptest.Peak()
	start := time.Now()
	bombID := h.sendDoc("+14155550123", srv.URL+"/bomb.pdf", false)
	normalID := h.send("+14155550124")
	evs := r.waitFor(bombID, "fax.failed")
	elapsed := time.Since(start)
	peak := stop()
	r.waitFor(normalID, "fax.delivered")

	assert.Equal(t, faxwebhooks.FaxFailureReasonFileFormatInvalid, evs[len(evs)-1].Value.(faxwebhooks.FaxFailedEvent).Payload.FailureReason)
	t.Logf("PDF bomb (%d bytes, 4 x 256 MiB inflated): failed in %v, peak heap growth %.1f MiB", len(bomb), elapsed, float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(64<<20), "refusing the bomb costs under 64 MiB of heap")

	got, err := h.api.ListFaxesWithResponse(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, got.JSON200.Data, 2)
}

// countMeasured counts doc's pages, which must succeed, and returns the
// time it took and the heap's peak growth meanwhile.
func countMeasured(t *testing.T, doc []byte) (pages int, elapsed time.Duration, peak uint64) {
	t.Helper()
	stop := heaptest.Peak()
	start := time.Now()
	pages, err := CountPages(doc)
	elapsed = time.Since(start)
	peak = stop()
	require.NoError(t, err)
	return pages, elapsed, peak
}

func TestCountPages_ADocumentJustUnderTheDecodeBudgetIsCountedInBoundedMemory(t *testing.T) {
	// Four object streams of 7 MiB: 28 MiB decoded, under MaxDecodedBytes.
	n, elapsed, peak := countMeasured(t, pdftest.Bomb(4, 7<<20))
	assert.Equal(t, 4, n)
	t.Logf("a document decoding to 28 MiB: counted in %v, peak heap growth %.1f MiB", elapsed, float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(4*MaxDecodedBytes), "at most four times the decode budget")
}

func TestCountPages_ObjectsAreBounded(t *testing.T) {
	// n pages are n+2 objects and n+3 cross-reference entries: at the limit,
	// counted (and refused later for its pages).
	atLimit := makePDF(MaxObjects - 3)
	n, elapsed, peak := countMeasured(t, atLimit)
	assert.Equal(t, MaxObjects-3, n)
	t.Logf("a document of %d objects (%.1f MB): counted in %v, peak heap growth %.1f MiB", MaxObjects, float64(len(atLimit))/1e6, elapsed, float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(4*MaxDecodedBytes), "at most four times the decode budget")

	_, err := CountPages(makePDF(MaxObjects - 2))
	assert.ErrorIs(t, err, pdflimit.ErrLimit, "one object more is refused before the library reads it")
}

// tenant is a second account of the harness's server, with its own key,
// application and number.
type tenant struct {
	acct string
	api  *faxapi.ClientWithResponses
	app  string
	from string
}

func (h *harness) newTenant(name, from string) tenant {
	h.t.Helper()
	acct, key, app := newSendingAccount(h.t, h.srv.Operator(), name, from, "http://127.0.0.1:9/")
	return tenant{acct: acct, api: keyClient(h.t, h.url, key), app: app, from: from}
}

// insertQueued stores a queued fax of the account's application, due at at,
// as a send would, and returns its id.
func (h *harness) insertQueued(acct, app string, at time.Time) string {
	h.t.Helper()
	f := faxRow{ID: uuid.NewString(), AccountID: acct, ConnectionID: app, Direction: "outbound", From: h.from, To: "+14155550123",
		MediaURL: "http://docs.test/doc.pdf", Quality: "normal", Status: "queued", Outcome: "delivered", NextStepAt: &at, CreatedAt: at, UpdatedAt: at}
	require.NoError(h.t, h.srv.store.insertFax(context.Background(), f, nil, nil))
	return f.ID
}

func (tn tenant) send(t *testing.T, mediaURL string) string {
	t.Helper()
	resp, err := tn.api.SendFaxWithResponse(context.Background(), faxapi.SendFaxJSONRequestBody{
		ConnectionId: tn.app, To: "+14155550123", From: tn.from, MediaUrl: mediaURL,
	})
	testkit.Answered(t, http.StatusAccepted, resp, err)
	return resp.JSON202.Data.Id.String()
}

func (tn tenant) status(t *testing.T, id string) faxapi.FaxStatus {
	t.Helper()
	return getFax(t, tn.api, id).Status
}

// trickle serves a PDF one byte every interval, until the client leaves.
func trickle(t *testing.T, interval time.Duration, started *atomic.Int32) *httptest.Server {
	t.Helper()
	doc := makePDF(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		w.Header().Set("Content-Type", "application/pdf")
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for _, b := range doc {
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSimulator_ASlowAccountDoesNotStallAnother(t *testing.T) {
	// The trickling server first: cleanups run last in first out, so the
	// server stops (ending the downloads) before the trickle waits for them.
	var started atomic.Int32
	slowDocs := trickle(t, 100*time.Millisecond, &started)
	h := newHarness(t, func(c *Config) { c.MediaTimeout = time.Minute })
	slow := h.newTenant("slow", "+13125550101")
	normal := h.newTenant("normal", "+13125550102")

	var slowIDs []string
	for range 24 {
		slowIDs = append(slowIDs, slow.send(t, slowDocs.URL+"/doc.pdf"))
	}
	// Wait until the slow account's downloads hold the workers they may.
	require.Eventually(t, func() bool { return started.Load() >= simPerAccount }, 5*time.Second, time.Millisecond)

	start := time.Now()
	id := normal.send(t, h.docs.URL+"/3-pages.pdf")
	require.Eventually(t, func() bool { return normal.status(t, id) == faxapi.FaxStatusDelivered }, 5*time.Second, 5*time.Millisecond,
		"the other account's fax is delivered while the slow downloads go on")
	t.Logf("the other account's fax was delivered in %v beside 24 trickling downloads", time.Since(start))
	assert.LessOrEqual(t, started.Load(), int32(simPerAccount), "the slow account holds at most its share of the workers")
	for _, sid := range slowIDs {
		assert.Equal(t, faxapi.FaxStatusQueued, slow.status(t, sid), "the slow faxes are still downloading or waiting")
	}
}

func TestSimulator_ADocumentTricklingInIsCutAtMediaTimeout(t *testing.T) {
	var started atomic.Int32
	slowDocs := trickle(t, 50*time.Millisecond, &started)
	h := newHarness(t, func(c *Config) { c.MediaTimeout = 300 * time.Millisecond })
	start := time.Now()
	id := h.sendDoc("+14155550123", slowDocs.URL+"/doc.pdf", false)
	f := h.waitFinal(id)
	elapsed := time.Since(start)
	require.NotNil(t, f.FailureReason)
	assert.Equal(t, faxapi.FaxFailureReasonFileDownloadFailed, *f.FailureReason)
	t.Logf("a document at 20 bytes/s failed after %v (MediaTimeout 300ms)", elapsed)
	assert.Less(t, elapsed, 3*time.Second, "the body is cut at the deadline, not read to its end")
}

func TestClaimDueFaxes_OneAccountsBacklogDoesNotHideAnothersDueFax(t *testing.T) {
	h := newHarness(t)
	other := h.newTenant("other", "+13125550103")
	ctx := context.Background()
	// Due in an hour by the harness's clock, so the running simulator leaves
	// them alone; read as of two hours on.
	at := h.clock.Now().Add(time.Hour)
	for i := range 300 {
		h.insertQueued(h.acct, h.app, at.Add(time.Duration(i)*time.Microsecond))
	}
	late := h.insertQueued(other.acct, other.app, at.Add(time.Second)) // the newest of all

	now := at.Add(time.Hour)
	due, err := h.srv.store.claimDueFaxes(ctx, "test", now, now.Add(time.Minute), simPerAccount, 256)
	require.NoError(t, err)
	perAccount := map[string]int{}
	var ids []string
	for _, f := range due {
		perAccount[f.AccountID]++
		ids = append(ids, f.ID)
	}
	assert.Equal(t, map[string]int{h.acct: simPerAccount, other.acct: 1}, perAccount)
	assert.Contains(t, ids, late, "the other account's due fax is read despite the backlog")
}

// An account at its share of claimed faxes does not take the place of
// another account's due fax, even when a single fax is claimed.
func TestClaimDueFaxes_AnAccountAtItsShareLeavesTheClaimToAnother(t *testing.T) {
	h := newHarness(t)
	other := h.newTenant("other", "+13125550104")
	ctx := context.Background()
	at := h.clock.Now().Add(time.Hour) // later than the running simulator looks
	for i := range 5 {
		h.insertQueued(h.acct, h.app, at.Add(time.Duration(i)*time.Microsecond))
	}
	late := h.insertQueued(other.acct, other.app, at.Add(time.Second))
	now := at.Add(time.Hour)
	held, err := h.srv.store.claimDueFaxes(ctx, "elsewhere", now, now.Add(time.Minute), simPerAccount, simPerAccount)
	require.NoError(t, err)
	require.Len(t, held, simPerAccount)
	due, err := h.srv.store.claimDueFaxes(ctx, "test", now, now.Add(time.Minute), simPerAccount, 1)
	require.NoError(t, err)
	require.Len(t, due, 1)
	assert.Equal(t, late, due[0].ID, "the first account holds its share: the other's fax is claimed")
}
