package fax

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/internal/testkit"
)

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
