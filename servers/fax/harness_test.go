package fax

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/egress"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// makePDF returns a minimal valid PDF of pages empty pages.
func makePDF(pages int) []byte {
	var b bytes.Buffer
	var offsets []int
	b.WriteString("%PDF-1.4\n")
	obj := func(s string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), s)
	}
	var kids bytes.Buffer
	for i := range pages {
		fmt.Fprintf(&kids, "%d 0 R ", 3+i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), pages))
	for range pages {
		obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> >>")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// documents serves the fax documents the tests send: /3-pages.pdf, a PDF
// over the page limit, a text file and a 404.
func documents(t testing.TB) *httptest.Server {
	t.Helper()
	three, big := makePDF(3), makePDF(MaxPages+1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /3-pages.pdf", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(three)
	})
	mux.HandleFunc("GET /too-many-pages.pdf", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(big)
	})
	mux.HandleFunc("GET /not-a-pdf.txt", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("hello, this is not a PDF"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// receiver is a webhook endpoint built on clients/fax's handler: it records
// every verified event, and answers as behave says (nil: accept).
type receiver struct {
	t   testing.TB
	url string

	mu     sync.Mutex
	events []faxwebhook.Event
	behave func(e faxwebhook.Event) error
	notify chan struct{}
}

// newReceivingHarness is a harness whose application sends every webhook
// to a receiver of the test's: how a test that watches the events starts.
func newReceivingHarness(t testing.TB, opts ...harnessOption) (*harness, *receiver) {
	t.Helper()
	h := newHarness(t, opts...)
	r := newReceiver(t, h)
	h.useReceivers(r.url, "")
	return h, r
}

func newReceiver(t testing.TB, h *harness) *receiver {
	t.Helper()
	r := &receiver{t: t, notify: make(chan struct{}, 1)}
	handler, err := faxwebhook.NewHandler(h.srv.Operator().WebhookPublicKey(), func(_ context.Context, e faxwebhook.Event) error {
		r.mu.Lock()
		behave := r.behave
		r.mu.Unlock()
		if behave != nil {
			if err := behave(e); err != nil {
				return err
			}
		}
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
		nudge(r.notify)
		return nil
	}, faxwebhook.WithClock(h.clock.Now))
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/"
	return r
}

func (r *receiver) setBehaviour(f func(e faxwebhook.Event) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.behave = f
}

// failFirst makes the receiver answer 500 to the first n deliveries of
// events of type eventType (a receiver's hiccup) and take the rest.
func (r *receiver) failFirst(eventType string, n int32) {
	var failures atomic.Int32
	r.setBehaviour(func(e faxwebhook.Event) error {
		if e.Type == eventType && failures.Add(1) <= n {
			return errors.New("receiver hiccup")
		}
		return nil
	})
}

// eventsOf returns the events received about fax id, in arrival order.
func (r *receiver) eventsOf(faxID string) []faxwebhook.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []faxwebhook.Event
	for _, e := range r.events {
		if e.FaxID == faxID {
			out = append(out, e)
		}
	}
	return out
}

// typesOf returns the types of the events about fax id, in arrival order.
func (r *receiver) typesOf(faxID string) []string {
	var out []string
	for _, e := range r.eventsOf(faxID) {
		out = append(out, e.Type)
	}
	return out
}

// waitFor waits until the events about faxID end with last (or times out).
func (r *receiver) waitFor(faxID, last string) []faxwebhook.Event {
	r.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		evs := r.eventsOf(faxID)
		if len(evs) > 0 && evs[len(evs)-1].Type == last {
			return evs
		}
		select {
		case <-r.notify:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s of fax %s; got %v", last, faxID, r.typesOf(faxID))
			return nil
		}
	}
}

// harness is a fax server on a fresh database, served over real HTTP, with an
// account, an application sending from h.from and a generated client.
type harness struct {
	t   testing.TB
	srv *Server
	cfg Config
	// reopen opens another handle on the harness's database (start opens
	// one each time).
	reopen func() *sql.DB
	url    string
	clock  *clock.Fake
	docs   *httptest.Server
	api    *faxapi.ClientWithResponses
	key    string
	acct   string
	app    string
	from   string
	stop   func()
	// webhookKey is the server's webhook public key, checking deliveries.
	webhookKey ed25519.PublicKey
}

type harnessOption func(*Config)

// testMigrations are the fax schema's migrations for testdb.
var testMigrations = testdb.Migrations(API.Migrations())

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	dir := t.TempDir()
	first, reopen := testdb.OpenTwice(t, testMigrations)
	_ = first.Close()
	h := &harness{t: t, reopen: reopen, clock: clock.NewFake(time.Now().UTC()), from: "+13125550100"}
	masterKey, err := LoadOrCreateMasterKey(filepath.Join(dir, "fax-master.key"))
	require.NoError(t, err)
	h.cfg = Config{
		Deps: Deps{Clock: h.clock, ValidateResponses: true, Logger: slog.New(slog.DiscardHandler), OnResponseViolation: func(r *http.Request, status int, err error) {
			t.Errorf("response %d to %s %s breaks the spec: %v", status, r.Method, r.URL.Path, err)
		}},
		MasterKey: masterKey,
		Settings: Settings{StepInterval: 0, WebhookTimeout: 2 * time.Second, WebhookAttempts: 3,
			WebhookBackoff: 5 * time.Millisecond, WebhookMaxBackoff: 20 * time.Millisecond},
		ReplicaID: "harness",
	}
	// The test servers are on loopback: the harness opts in to private
	// destinations (tests of the policy use defaultDestinations). Every
	// delivery is checked against webhooks.yaml, its signature included.
	h.cfg.Destinations = egress.Options{AllowPrivate: true}
	h.cfg.WebhookTransport = func(base http.RoundTripper) http.RoundTripper {
		hooks, err := contract.ForAPI(contract.FaxWebhooks, base, contract.OnViolation(func(v *contract.Violation) {
			t.Errorf("webhook delivery breaks webhooks.yaml: %v", v)
		}), contract.WithCredentialCheck(h.verifyDelivery))
		require.NoError(t, err)
		return hooks
	}
	for _, o := range opts {
		o(&h.cfg)
	}
	h.start()
	h.webhookKey = h.srv.Operator().WebhookPublicKey()
	h.docs = documents(t)

	// Until a test points the application elsewhere, its webhooks go
	// nowhere: to the discard port on loopback, or, where the policy
	// refuses loopback (and would refuse to store that URL), to a name
	// the test's resolver does not know.
	nowhere := "http://127.0.0.1:9/"
	if d := h.cfg.Destinations; !d.AllowPrivate && !d.AllowLoopback {
		nowhere = "http://nowhere.test:9/"
	}
	h.acct, h.key, h.app = newSendingAccount(t, h.srv.Operator(), "acme", h.from, nowhere)

	rt, err := contract.ForAPI(contract.Fax, nil, contract.WithoutRequestValidation(), contract.OnViolation(func(v *contract.Violation) {
		t.Errorf("fax API breaks its spec: %v", v)
	}))
	require.NoError(t, err)
	h.api, err = faxapi.NewClientWithResponses(h.url, faxapi.WithHTTPClient(&http.Client{Transport: rt}),
		faxapi.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			if req.Header.Get("Authorization") == "" {
				req.Header.Set("Authorization", "Bearer "+h.key)
			}
			return nil
		}))
	require.NoError(t, err)
	return h
}

// newSendingAccount creates, through op, an account that can send from the
// number from: its API key, an outbound voice profile, an application whose
// webhooks go to webhookURL, and the number enabled on it.
func newSendingAccount(t testing.TB, op *Operator, name, from, webhookURL string) (acct, key, app string) {
	t.Helper()
	ctx := context.Background()
	a, err := op.CreateAccount(ctx, name)
	require.NoError(t, err)
	_, key, err = op.IssueAPIKey(ctx, a.ID)
	require.NoError(t, err)
	profile, err := op.CreateOutboundVoiceProfile(ctx, a.ID, "default")
	require.NoError(t, err)
	application, err := op.CreateApplication(ctx, Application{AccountID: a.ID, Name: "main", WebhookURL: webhookURL, OutboundVoiceProfileID: profile})
	require.NoError(t, err)
	require.NoError(t, op.AssignNumber(ctx, a.ID, from, application.ID))
	return a.ID, key, application.ID
}

// keyClient is a client of the fax API at url sending key.
func keyClient(t testing.TB, url, key string) *faxapi.ClientWithResponses {
	t.Helper()
	api, err := faxapi.NewClientWithResponses(url, faxapi.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	require.NoError(t, err)
	return api
}

// getFax reads fax id through api, which must answer 200.
func getFax(t testing.TB, api *faxapi.ClientWithResponses, id string) faxapi.Fax {
	t.Helper()
	got, err := api.GetFaxWithResponse(context.Background(), uuid.MustParse(id))
	testkit.Answered(t, http.StatusOK, got, err)
	return got.JSON200.Data
}

// verifyDelivery checks the signature of a webhook delivery with the
// server's public key, as the spec's webhookSignature scheme says. The
// timestamp's freshness is the receiver's business (tests move the clock).
func (h *harness) verifyDelivery(_ *openapi3.SecurityScheme, req *http.Request, body []byte) error {
	ts := req.Header.Get(faxwebhook.HeaderTimestamp)
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook timestamp %q: %w", ts, err)
	}
	return faxwebhook.VerifySignature(h.webhookKey, ts, req.Header.Get(faxwebhook.HeaderSignature), body, time.Unix(secs, 0), 0)
}

// start opens the database and serves the API and the worker; stop undoes it.
func (h *harness) start() {
	t := h.t
	t.Helper()
	db := h.reopen()
	cfg := h.cfg
	cfg.DB = db
	s := serve(t, cfg)
	h.srv, h.url = s.srv, s.api.URL
	if fake, ok := cfg.Clock.(*clock.Fake); ok {
		// Webhook retries wait in the server's clock: the fake one is moved
		// on to each retry as soon as its wait starts (waits up to the
		// largest backoff; the simulator's steps still wait for the test).
		go func() {
			for {
				waiting := fake.Waiting()
				if fake.AdvanceToNextTimer(cfg.WebhookMaxBackoff) {
					continue
				}
				select {
				case <-waiting:
				case <-s.ctx.Done():
					return
				}
			}
		}()
	}
	stopped := false
	h.stop = func() {
		if stopped {
			return
		}
		stopped = true
		s.stop()
		s.api.Close()
		_ = db.Close()
	}
	t.Cleanup(func() { h.stop() })
}

// served is a fax server served over HTTP with its loops running.
type served struct {
	srv *Server
	api *httptest.Server
	// ctx ends at stop.
	ctx context.Context
	// stop ends the server's loops and waits for them; like a crash, it
	// releases nothing. The API is served until the test ends.
	stop func()
}

// serve starts a fax server on cfg, serves its API (its base URL set to it)
// and runs its simulator and webhook sender until stop or the test's end.
func serve(t testing.TB, cfg Config) served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, cfg)
	require.NoError(t, err)
	handler, err := srv.Handler()
	require.NoError(t, err)
	api := httptest.NewServer(handler)
	t.Cleanup(api.Close)
	srv.SetBaseURL(api.URL)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Run(ctx) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return served{srv: srv, api: api, ctx: ctx, stop: stop}
}

// useReceivers points the application's webhooks at primary and failover
// ("" for none).
func (h *harness) useReceivers(primary, failover string) {
	h.t.Helper()
	body := faxapi.UpdateFaxApplicationJSONRequestBody{WebhookUrl: &primary, WebhookFailoverUrl: &failover}
	resp, err := h.api.UpdateFaxApplicationWithResponse(context.Background(), h.app, body)
	testkit.Answered(h.t, http.StatusOK, resp, err)
}

// send sends a fax of the 3-page document to to and returns its id.
func (h *harness) send(to string) string {
	h.t.Helper()
	return h.sendDoc(to, h.docs.URL+"/3-pages.pdf", false)
}

func (h *harness) sendDoc(to, mediaURL string, store bool) string {
	h.t.Helper()
	resp, err := h.api.SendFaxWithResponse(context.Background(), faxapi.SendFaxJSONRequestBody{
		ConnectionId: h.app, To: to, From: h.from, MediaUrl: mediaURL, StoreMedia: &store,
	})
	testkit.Answered(h.t, http.StatusAccepted, resp, err)
	require.Equal(h.t, faxapi.FaxStatusQueued, resp.JSON202.Data.Status)
	return resp.JSON202.Data.Id.String()
}

// waitFinal polls the fax until it is in a final state and returns it.
func (h *harness) waitFinal(id string) faxapi.Fax {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := getFax(h.t, h.api, id)
		if isFinal(string(got.Status)) {
			return got
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("fax %s still %s", id, got.Status)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not a wait for an event
	}
}
