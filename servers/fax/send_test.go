package fax

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// postForm sends a form-encoded request as the service description shows.
func (h *harness) postForm(form url.Values, key string) (int, faxapi.Errors, faxapi.FaxResponse) {
	h.t.Helper()
	resp, body := testkit.Request{Method: http.MethodPost, URL: h.url + "/v2/faxes", Token: key}.Form(form).Do(h.t)
	var errs faxapi.Errors
	var fax faxapi.FaxResponse
	if resp.StatusCode == http.StatusAccepted {
		require.NoError(h.t, json.Unmarshal(body, &fax), string(body))
	} else {
		require.NoError(h.t, json.Unmarshal(body, &errs), string(body))
	}
	return resp.StatusCode, errs, fax
}

func (h *harness) validForm() url.Values {
	return url.Values{
		"media_url": {h.docs.URL + "/3-pages.pdf"}, "connection_id": {h.app},
		"to": {"+14155550123"}, "from": {h.from},
	}
}

func TestSendFax_FormEncodedAsTheSeedShowsIsQueued(t *testing.T) {
	h := newHarness(t)
	form := h.validForm()
	form.Set("quality", "high")
	form.Set("store_media", "true")
	status, _, fax := h.postForm(form, h.key)
	require.Equal(t, http.StatusAccepted, status)
	assert.Equal(t, faxapi.FaxStatusQueued, fax.Data.Status)
	assert.Equal(t, faxapi.FaxQualityHigh, fax.Data.Quality)
	assert.True(t, fax.Data.StoreMedia)
	assert.Equal(t, faxapi.FaxRecordTypeFax, fax.Data.RecordType)
	assert.Equal(t, "+14155550123", fax.Data.To)
}

func TestSendFax_InvalidRequestsAnswer422NamingTheFieldAndQueueNothing(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	// Objects of another account and an application without a profile.
	other, err := h.srv.Operator().CreateAccount(ctx, "other")
	require.NoError(t, err)
	otherProfile, err := h.srv.Operator().CreateOutboundVoiceProfile(ctx, other.ID, "p")
	require.NoError(t, err)
	otherApp, err := h.srv.Operator().CreateApplication(ctx, Application{AccountID: other.ID, Name: "theirs", WebhookURL: "http://127.0.0.1:9/", OutboundVoiceProfileID: otherProfile})
	require.NoError(t, err)
	noProfile, err := h.srv.Operator().CreateApplication(ctx, Application{AccountID: h.acct, Name: "receive only", WebhookURL: "http://127.0.0.1:9/"})
	require.NoError(t, err)
	require.NoError(t, h.srv.Operator().AssignNumber(ctx, h.acct, "+13125550199", noProfile.ID))
	require.NoError(t, h.srv.Operator().AssignNumber(ctx, h.acct, "+13125550198", ""))

	tests := []struct {
		name    string
		change  func(url.Values)
		pointer string
	}{
		{"to not E.164", func(f url.Values) { f.Set("to", "4155550123") }, "/to"},
		{"to not a valid number", func(f url.Values) { f.Set("to", "+1000") }, "/to"},
		{"to with spaces", func(f url.Values) { f.Set("to", "+1 415 555 0123") }, "/to"},
		{"from not E.164", func(f url.Values) { f.Set("from", "0044 20 7946 0958") }, "/from"},
		{"from not enabled on the application", func(f url.Values) { f.Set("from", "+13125550198") }, "/from"},
		{"from enabled on another application", func(f url.Values) { f.Set("from", "+13125550199") }, "/from"},
		{"unknown connection_id", func(f url.Values) { f.Set("connection_id", uuid.NewString()) }, "/connection_id"},
		{"connection_id of another account", func(f url.Values) { f.Set("connection_id", otherApp.ID) }, "/connection_id"},
		{"application without an outbound voice profile", func(f url.Values) {
			f.Set("connection_id", noProfile.ID)
			f.Set("from", "+13125550199")
		}, "/connection_id"},
		{"media_url ftp", func(f url.Values) { f.Set("media_url", "ftp://example.com/doc.pdf") }, "/media_url"},
		{"media_url relative", func(f url.Values) { f.Set("media_url", "/doc.pdf") }, "/media_url"},
		{"media_url missing", func(f url.Values) { f.Del("media_url") }, "/media_url"},
		{"unknown quality", func(f url.Values) { f.Set("quality", "fuzzy") }, "/quality"},
		{"unknown field", func(f url.Values) { f.Set("priority", "high") }, "/priority"},
		{"field given twice", func(f url.Values) { f.Add("to", "+14155550124") }, "/to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := h.validForm()
			tt.change(form)
			status, errs, _ := h.postForm(form, h.key)
			require.Equal(t, http.StatusUnprocessableEntity, status)
			var pointers []string
			for _, e := range errs.Errors {
				assert.Equal(t, faxapi.ErrorCodeInvalidParameter, e.Code)
				assert.NotEmpty(t, e.Title)
				require.NotNil(t, e.Source, e.Detail)
				require.NotNil(t, e.Source.Pointer, e.Detail)
				pointers = append(pointers, *e.Source.Pointer)
			}
			assert.Contains(t, pointers, tt.pointer)
		})
	}
	list, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{})
	require.NoError(t, err)
	assert.Zero(t, list.JSON200.Meta.TotalResults, "nothing was queued")
}

func TestSendFax_BadOrMissingAPIKeyAnswers401(t *testing.T) {
	h := newHarness(t)
	for name, key := range map[string]string{"missing": "", "unknown": "KEYnot-a-real-key", "malformed": "a b"} {
		t.Run(name, func(t *testing.T) {
			status, errs, _ := h.postForm(h.validForm(), key)
			require.Equal(t, http.StatusUnauthorized, status)
			assert.Equal(t, faxapi.ErrorCodeAuthenticationFailed, errs.Errors[0].Code)
		})
	}
}

func TestListFaxes_PagesAndFilters(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.StepInterval = time.Hour })
	ctx := context.Background()
	for range 3 {
		h.send("+14155550123")
	}
	last := h.send("+13125550800")
	_, err := h.srv.Operator().InjectInbound(ctx, InboundFax{From: "+14155550123", To: h.from, Document: makePDF(1), Outcome: InboundReceived})
	require.NoError(t, err)

	size := 2
	p1, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{PageSize: &size})
	testkit.Answered(t, http.StatusOK, p1, err)
	assert.Equal(t, faxapi.PageMeta{PageNumber: 1, PageSize: 2, TotalPages: 3, TotalResults: 5}, p1.JSON200.Meta)

	to := "+13125550800"
	byTo, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{FilterTo: &to})
	require.NoError(t, err)
	require.Len(t, byTo.JSON200.Data, 1)
	assert.Equal(t, last, byTo.JSON200.Data[0].Id.String())

	in := faxapi.FaxDirectionInbound
	inbound, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{FilterDirection: &in})
	require.NoError(t, err)
	require.Len(t, inbound.JSON200.Data, 1)
	assert.Equal(t, faxapi.FaxDirectionInbound, inbound.JSON200.Data[0].Direction)

	future := h.clock.Now().Add(time.Hour)
	none, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{FilterCreatedAtGte: &future})
	require.NoError(t, err)
	assert.Empty(t, none.JSON200.Data)
}

func TestMediaLink_ExpiresAfterTenMinutesAndIsTamperEvident(t *testing.T) {
	h, r := newReceivingHarness(t)
	ctx := context.Background()

	id := h.sendDoc("+14155550123", h.docs.URL+"/3-pages.pdf", true)
	r.waitFor(id, "fax.delivered")
	got, err := h.api.GetFaxWithResponse(ctx, uuid.MustParse(id))
	require.NoError(t, err)
	require.NotNil(t, got.JSON200.Data.StoredMediaUrl)
	link := *got.JSON200.Data.StoredMediaUrl

	get := func(u string) int {
		resp, err := http.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK {
			n, err := CountPages(body)
			require.NoError(t, err)
			assert.Equal(t, 3, n)
		}
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get(link))

	u, err := url.Parse(link)
	require.NoError(t, err)
	q := u.Query()
	q.Set("expires", q.Get("expires")+"0")
	u.RawQuery = q.Encode()
	assert.Equal(t, http.StatusForbidden, get(u.String()), "a later expiry breaks the signature")

	h.clock.Advance(9*time.Minute + 59*time.Second)
	assert.Equal(t, http.StatusOK, get(link))
	h.clock.Advance(time.Second)
	assert.Equal(t, http.StatusForbidden, get(link), "expired after 10 minutes")

	fresh, err := h.api.RefreshFaxWithResponse(ctx, uuid.MustParse(id))
	testkit.Answered(t, http.StatusOK, fresh, err)
	assert.Equal(t, http.StatusOK, get(*fresh.JSON200.Data.StoredMediaUrl), "refresh issues a fresh link")
}

func TestFaxApplications_CreateGetUpdateListDelete(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	created, err := h.api.CreateFaxApplicationWithResponse(ctx, faxapi.CreateFaxApplicationJSONRequestBody{
		ApplicationName: "second", WebhookUrl: "https://example.com/hooks",
	})
	testkit.Answered(t, http.StatusCreated, created, err)
	app := created.JSON201.Data
	assert.Nil(t, app.OutboundVoiceProfileId)
	assert.Equal(t, "", app.WebhookFailoverUrl)

	name := "renamed"
	upd, err := h.api.UpdateFaxApplicationWithResponse(ctx, app.Id, faxapi.UpdateFaxApplicationJSONRequestBody{ApplicationName: &name})
	testkit.Answered(t, http.StatusOK, upd, err)
	assert.Equal(t, "renamed", upd.JSON200.Data.ApplicationName)
	assert.Equal(t, "https://example.com/hooks", upd.JSON200.Data.WebhookUrl, "absent fields keep their value")

	bogus := uuid.NewString()
	bad, err := h.api.UpdateFaxApplicationWithResponse(ctx, app.Id, faxapi.UpdateFaxApplicationJSONRequestBody{OutboundVoiceProfileId: &bogus})
	testkit.Answered(t, http.StatusUnprocessableEntity, bad, err)
	assert.Equal(t, "/outbound_voice_profile_id", *bad.JSON422.Errors[0].Source.Pointer)

	list, err := h.api.ListFaxApplicationsWithResponse(ctx, &faxapi.ListFaxApplicationsParams{})
	require.NoError(t, err)
	assert.Equal(t, 2, list.JSON200.Meta.TotalResults)

	del, err := h.api.DeleteFaxApplicationWithResponse(ctx, app.Id)
	testkit.Answered(t, http.StatusNoContent, del, err)
	gone, err := h.api.GetFaxApplicationWithResponse(ctx, app.Id)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, gone.StatusCode())
}

func TestFaxApplications_AnIDOverTheLimitAnswersADeclared422(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	long := strings.Repeat("a", 65)

	got, err := h.api.GetFaxApplicationWithResponse(ctx, long)
	testkit.Answered(t, http.StatusUnprocessableEntity, got, err)
	require.NotNil(t, got.JSON422)
	assert.Equal(t, "id", *got.JSON422.Errors[0].Source.Parameter)

	del, err := h.api.DeleteFaxApplicationWithResponse(ctx, long)
	testkit.Answered(t, http.StatusUnprocessableEntity, del, err)
	require.NotNil(t, del.JSON422)
	assert.Equal(t, "id", *del.JSON422.Errors[0].Source.Parameter)
}

func TestFaxRecords_AnsweredTimestampsAreTheStoredOnes(t *testing.T) {
	// Steps an hour apart: the fax waits in progress until it is cancelled.
	h := newHarness(t, func(c *Config) { c.StepInterval = time.Hour })
	ctx := context.Background()
	// A clock reading with nanoseconds, finer than what is stored.
	h.clock.Advance(123 * time.Nanosecond)

	sent, err := h.api.SendFaxWithResponse(ctx, faxapi.SendFaxJSONRequestBody{
		ConnectionId: h.app, To: "+13125550820", From: h.from, MediaUrl: h.docs.URL + "/3-pages.pdf",
	})
	testkit.Answered(t, http.StatusAccepted, sent, err)
	got, err := h.api.GetFaxWithResponse(ctx, sent.JSON202.Data.Id)
	testkit.Answered(t, http.StatusOK, got, err)
	assert.Equal(t, got.JSON200.Data.CreatedAt, sent.JSON202.Data.CreatedAt, "send answers the created_at a get answers")

	h.clock.Advance(123 * time.Nanosecond)
	cancelled, err := h.api.CancelFaxWithResponse(ctx, sent.JSON202.Data.Id)
	testkit.Answered(t, http.StatusOK, cancelled, err)
	got, err = h.api.GetFaxWithResponse(ctx, sent.JSON202.Data.Id)
	require.NoError(t, err)
	assert.Equal(t, got.JSON200.Data.UpdatedAt, cancelled.JSON200.Data.UpdatedAt, "cancel answers the updated_at a get answers")

	h.clock.Advance(123 * time.Nanosecond)
	created, err := h.api.CreateFaxApplicationWithResponse(ctx, faxapi.CreateFaxApplicationJSONRequestBody{
		ApplicationName: "third", WebhookUrl: "https://example.com/hooks",
	})
	testkit.Answered(t, http.StatusCreated, created, err)
	app, err := h.api.GetFaxApplicationWithResponse(ctx, created.JSON201.Data.Id)
	require.NoError(t, err)
	assert.Equal(t, app.JSON200.Data.CreatedAt, created.JSON201.Data.CreatedAt, "create answers the created_at a get answers")
}

func TestMediaLink_ASignatureWithAnotherLastCharacterIsRefused(t *testing.T) {
	h, r := newReceivingHarness(t)
	id := h.sendDoc("+14155550123", h.docs.URL+"/3-pages.pdf", true)
	r.waitFor(id, "fax.delivered")
	got, err := h.api.GetFaxWithResponse(context.Background(), uuid.MustParse(id))
	require.NoError(t, err)
	require.NotNil(t, got.JSON200.Data.StoredMediaUrl)
	u, err := url.Parse(*got.JSON200.Data.StoredMediaUrl)
	require.NoError(t, err)

	// A 32-byte HMAC is 43 unpadded base64 characters: the last one carries
	// four bits of the MAC and two unused bits. Changing only the unused bits
	// gives another string a lenient decoder reads as the same MAC.
	q := u.Query()
	sig := q.Get("signature")
	require.Len(t, sig, 43)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := alphabet[strings.IndexByte(alphabet, sig[42])^1]
	altered := sig[:42] + string(last)
	lenientA, err := base64.RawURLEncoding.DecodeString(sig)
	require.NoError(t, err)
	lenientB, err := base64.RawURLEncoding.DecodeString(altered)
	require.NoError(t, err)
	require.Equal(t, lenientA, lenientB, "the altered signature decodes leniently to the same bytes")

	get := func(u string) int {
		resp, err := http.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get(u.String()))
	q.Set("signature", altered)
	u.RawQuery = q.Encode()
	assert.Equal(t, http.StatusForbidden, get(u.String()), "only the canonical encoding of the signature is accepted")
}

// A send reads its application from a cache; changing the application's
// webhook URL is seen by the very next send, and so is deleting it.
func TestSend_AnApplicationChangedAfterUseIsReadAfresh(t *testing.T) {
	h := newHarness(t)
	first, second := newReceiver(t, h), newReceiver(t, h)
	h.useReceivers(first.url, "")
	a := h.send("+14155550123")
	first.waitFor(a, "fax.delivered")

	h.useReceivers(second.url, "")
	b := h.send("+14155550123")
	second.waitFor(b, "fax.delivered")
	assert.Empty(t, first.eventsOf(b), "the old URL gets nothing of a fax sent after the change")

	del, err := h.api.DeleteFaxApplicationWithResponse(context.Background(), h.app)
	testkit.Answered(t, http.StatusNoContent, del, err)
	resp, err := h.api.SendFaxWithResponse(context.Background(), faxapi.SendFaxJSONRequestBody{
		ConnectionId: h.app, To: "+14155550123", From: h.from, MediaUrl: h.docs.URL + "/3-pages.pdf",
	})
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode(), string(resp.Body))
}

// Pages of the list are kept until the next write: a fax sent, or moved on
// by the simulator, is seen by the next list.
func TestListFaxes_EveryWriteIsSeenByTheNextList(t *testing.T) {
	h, r := newReceivingHarness(t)
	statuses := func() []faxapi.FaxStatus {
		resp, err := h.api.ListFaxesWithResponse(context.Background(), &faxapi.ListFaxesParams{})
		testkit.Answered(t, http.StatusOK, resp, err)
		var out []faxapi.FaxStatus
		for _, f := range resp.JSON200.Data {
			out = append(out, f.Status)
		}
		return out
	}
	assert.Empty(t, statuses())
	assert.Empty(t, statuses(), "read again from the cache")
	id := h.send("+14155550123")
	assert.Len(t, statuses(), 1, "the send is seen")
	r.waitFor(id, "fax.delivered")
	assert.Equal(t, []faxapi.FaxStatus{faxapi.FaxStatusDelivered}, statuses(), "so is every step of the simulator")
}

// A list's answer is kept encoded within one second of the caller's clock:
// its media links are the ones a GetFax signs at that second, the same
// bytes while the clock stays in it, signed anew once it moves on, and each
// valid for MediaLinkTTL from the second it was signed at.
func TestListFaxes_MediaLinksAreSignedAtTheCallersSecond(t *testing.T) {
	// The clock moves only as the test says: the harness moves a
	// *clock.Fake on to each timer a retry waits for, which a clock of
	// another type hides from it (no delivery here is retried).
	h, r := newReceivingHarness(t, func(c *Config) { c.Clock = heldClock{c.Clock.(*clock.Fake)} })
	ctx := context.Background()
	id := h.sendDoc("+14155550123", h.docs.URL+"/3-pages.pdf", true)
	r.waitFor(id, "fax.delivered")
	h.clock.Set(h.clock.Now().Truncate(time.Second).Add(time.Second))

	listed := func() (string, []byte) {
		resp, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{})
		testkit.Answered(t, http.StatusOK, resp, err)
		require.Len(t, resp.JSON200.Data, 1)
		require.NotNil(t, resp.JSON200.Data[0].StoredMediaUrl)
		return *resp.JSON200.Data[0].StoredMediaUrl, resp.Body
	}
	expiry := func(link string) int64 {
		u, err := url.Parse(link)
		require.NoError(t, err)
		e, err := strconv.ParseInt(u.Query().Get("expires"), 10, 64)
		require.NoError(t, err)
		return e
	}
	status := func(link string) int {
		resp, err := http.Get(link)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}

	first, body := listed()
	assert.Equal(t, h.clock.Now().Add(MediaLinkTTL).Unix(), expiry(first))
	got, err := h.api.GetFaxWithResponse(ctx, uuid.MustParse(id))
	testkit.Answered(t, http.StatusOK, got, err)
	assert.Equal(t, first, *got.JSON200.Data.StoredMediaUrl, "the link GetFax signs at the same second")

	h.clock.Advance(999 * time.Millisecond)
	again, againBody := listed()
	assert.Equal(t, string(body), string(againBody), "the same second: the same answer")

	h.clock.Advance(time.Millisecond)
	next, _ := listed()
	assert.Equal(t, expiry(first)+1, expiry(next), "the next second: links signed at it")
	assert.Equal(t, http.StatusOK, status(again))
	assert.Equal(t, http.StatusOK, status(next))

	h.clock.Advance(MediaLinkTTL - time.Second)
	assert.Equal(t, http.StatusForbidden, status(first), "valid MediaLinkTTL from the second it was signed at")
	assert.Equal(t, http.StatusOK, status(next))
	latest, _ := listed()
	assert.Equal(t, http.StatusOK, status(latest))
}

// Webhook deliveries write only the outbox and the delivery attempts,
// which no list shows: their claims, attempts, retries and outcomes keep
// the list pages cached (sqldb.DB.QuietInTx), while a fax that moves on
// drops them.
func TestListFaxes_WebhookDeliveriesKeepTheListPagesCached(t *testing.T) {
	h, r := newReceivingHarness(t)
	ctx := context.Background()
	refused := make(chan struct{}, 16)
	r.mu.Lock()
	r.behave = func(e faxwebhook.Event) error {
		if e.Type != "fax.delivered" {
			return nil
		}
		refused <- struct{}{}
		return errors.New("the receiver is down")
	}
	r.mu.Unlock()

	id := h.send("+14155550123")
	<-refused // the fax is delivered: its last step has committed
	list := func() {
		resp, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{})
		testkit.Answered(t, http.StatusOK, resp, err)
		require.Len(t, resp.JSON200.Data, 1)
		assert.Equal(t, faxapi.FaxStatusDelivered, resp.JSON200.Data[0].Status)
	}
	list()
	pages, rendered := h.srv.store.pages.Generation(), h.srv.store.rendered.Generation()

	require.Eventually(t, func() bool {
		var pending int
		require.NoError(t, h.srv.store.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox
			WHERE fax_id = ? AND delivered_at IS NULL AND abandoned_at IS NULL`, id).Scan(&pending))
		return pending == 0
	}, 10*time.Second, time.Millisecond, "the event is abandoned")
	assert.Len(t, refused, h.cfg.WebhookAttempts-1, "refused at every attempt")
	var attempts int
	require.NoError(t, h.srv.store.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM delivery_attempts a
		JOIN outbox o ON o.seq = a.event_seq WHERE o.fax_id = ? AND o.event_type = 'fax.delivered'`, id).Scan(&attempts))
	assert.Equal(t, h.cfg.WebhookAttempts, attempts, "each attempt recorded")
	assert.Equal(t, pages, h.srv.store.pages.Generation(), "the rows of the pages are kept")
	assert.Equal(t, rendered, h.srv.store.rendered.Generation(), "so are the answers")

	h.send("+14155550124")
	assert.NotEqual(t, rendered, h.srv.store.rendered.Generation(), "a send drops them")
}

// heldClock is a fake clock the harness does not move on its own.
type heldClock struct{ *clock.Fake }

// A failed fax whose document was stored answers its failure reason beside
// a link that serves the document: one cancelled once its media is
// processed (reason user_cancelled), and one refreshed after failing while
// originating (+1 312 555 0801 fails with user_busy).
func TestFailedFax_WithStoredMediaAnswersItsReasonAndLink(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []harnessOption
		// to is the number sent to; the call is made once the fax's
		// webhook event is sent.
		to, event string
		call      func(ctx context.Context, h *harness, id uuid.UUID) faxapi.Fax
		reason    faxapi.FaxFailureReason
	}{
		{
			name: "cancel",
			// Steps a minute apart: the fax waits in media.processed until
			// it is cancelled.
			opts: []harnessOption{func(c *Config) { c.StepInterval = time.Minute }},
			to:   "+13125550800", event: "fax.media.processed",
			call: func(ctx context.Context, h *harness, id uuid.UUID) faxapi.Fax {
				resp, err := h.api.CancelFaxWithResponse(ctx, id)
				testkit.Answered(h.t, http.StatusOK, resp, err)
				return resp.JSON200.Data
			},
			reason: faxapi.FaxFailureReasonUserCancelled,
		},
		{
			name: "refresh", to: "+13125550801", event: "fax.failed",
			call: func(ctx context.Context, h *harness, id uuid.UUID) faxapi.Fax {
				resp, err := h.api.RefreshFaxWithResponse(ctx, id)
				testkit.Answered(h.t, http.StatusOK, resp, err)
				return resp.JSON200.Data
			},
			reason: faxapi.FaxFailureReasonUserBusy,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, r := newReceivingHarness(t, tc.opts...)
			id := h.sendDoc(tc.to, h.docs.URL+"/3-pages.pdf", true)
			r.waitFor(id, tc.event)
			got := tc.call(context.Background(), h, uuid.MustParse(id))
			assert.Equal(t, faxapi.FaxStatusFailed, got.Status)
			require.NotNil(t, got.FailureReason, "%+v", got)
			assert.Equal(t, tc.reason, *got.FailureReason)
			require.NotNil(t, got.StoredMediaUrl, "the stored document is linked: %+v", got)

			link, err := http.Get(*got.StoredMediaUrl)
			require.NoError(t, err)
			defer link.Body.Close()
			assert.Equal(t, http.StatusOK, link.StatusCode, "the link serves the document")
		})
	}
}

// An inbound fax received in part is listed as such: the list of inbound
// faxes carries partial_content.
func TestListFaxes_AnInboundFaxReceivedInPartSaysSo(t *testing.T) {
	h, r := newReceivingHarness(t)
	ctx := context.Background()

	id, err := h.srv.Operator().InjectInbound(ctx, InboundFax{From: "+14155550123", To: h.from, Document: makePDF(2), Outcome: InboundPartial})
	require.NoError(t, err)
	r.waitFor(id, "fax.received")
	inbound := faxapi.FaxDirectionInbound
	resp, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{FilterDirection: &inbound})
	testkit.Answered(t, http.StatusOK, resp, err)
	require.Len(t, resp.JSON200.Data, 1)
	got := resp.JSON200.Data[0]
	assert.Equal(t, id, got.Id.String())
	assert.Equal(t, faxapi.FaxStatusReceived, got.Status)
	require.NotNil(t, got.PartialContent, "%s", resp.Body)
	assert.True(t, *got.PartialContent)
}

func TestRateLimit_EachAccountMakesAtMostItsRateThen429WithRetryAfter(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RateLimit, c.RateLimitPeriod = 3, time.Minute })
	ctx := context.Background()
	for range 3 {
		resp, err := h.api.ListFaxesWithResponse(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	}
	resp, err := h.api.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode(), string(resp.Body))
	assert.Equal(t, "20", resp.HTTPResponse.Header.Get("Retry-After"), "one request per 20 s")
	require.NotNil(t, resp.JSON429)
	require.Len(t, resp.JSON429.Errors, 1)
	assert.Equal(t, faxapi.TooManyRequestsErrorsErrorsCodeTooManyRequests, resp.JSON429.Errors[0].Code)
	assert.Contains(t, resp.JSON429.Errors[0].Detail, "3 requests per 1m0s")

	// A refused send sends nothing.
	send, err := h.api.SendFaxWithFormdataBodyWithResponse(ctx, faxapi.SendFaxFormdataRequestBody{
		To: "+13125550199", From: h.from, ConnectionId: h.app, MediaUrl: h.docs.URL + "/1.pdf"})
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, send.StatusCode(), string(send.Body))
	var n int
	require.NoError(t, h.srv.store.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM faxes`).Scan(&n))
	assert.Zero(t, n, "nothing was queued")

	// Another account has its own rate.
	_, key, _ := newSendingAccount(t, h.srv.Operator(), "other", "+13125550111", "http://127.0.0.1:9/")
	other := keyClient(t, h.url, key)
	resp, err = other.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))

	// The bucket refills with the account's time.
	h.clock.Advance(20 * time.Second)
	resp, err = h.api.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
}

// Every operation of an account spends from the account's one bucket: once
// it is empty, each answers 429 with Retry-After and the error body,
// whatever it would have answered otherwise (the ids below name nothing).
func TestRateLimit_EveryOperationAnswers429OnceTheBucketIsEmpty(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RateLimit, c.RateLimitPeriod = 1, time.Minute })
	ctx := context.Background()
	fax, app, name := uuid.New(), uuid.NewString(), "renamed"
	ops := []struct {
		name string
		call func() (*http.Response, error)
	}{
		{"ListFaxApplications", func() (*http.Response, error) { return h.api.ListFaxApplications(ctx, nil) }},
		{"CreateFaxApplication", func() (*http.Response, error) {
			return h.api.CreateFaxApplication(ctx, faxapi.CreateFaxApplicationJSONRequestBody{
				ApplicationName: "limited", WebhookUrl: "https://example.com/hooks"})
		}},
		{"GetFaxApplication", func() (*http.Response, error) { return h.api.GetFaxApplication(ctx, app) }},
		{"UpdateFaxApplication", func() (*http.Response, error) {
			return h.api.UpdateFaxApplication(ctx, app, faxapi.UpdateFaxApplicationJSONRequestBody{ApplicationName: &name})
		}},
		{"DeleteFaxApplication", func() (*http.Response, error) { return h.api.DeleteFaxApplication(ctx, app) }},
		{"GetFax", func() (*http.Response, error) { return h.api.GetFax(ctx, fax) }},
		{"CancelFax", func() (*http.Response, error) { return h.api.CancelFax(ctx, fax) }},
		{"RefreshFax", func() (*http.Response, error) { return h.api.RefreshFax(ctx, fax) }},
		{"DeleteFax", func() (*http.Response, error) { return h.api.DeleteFax(ctx, fax) }},
	}

	// The one request of the minute.
	first, err := h.api.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, first.StatusCode(), string(first.Body))

	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			resp, err := op.call()
			require.NoError(t, err)
			defer func() { _ = resp.Body.Close() }()
			require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			require.NoError(t, err, "Retry-After in seconds")
			assert.Positive(t, secs)
			assert.LessOrEqual(t, secs, 60)
		})
	}
}
