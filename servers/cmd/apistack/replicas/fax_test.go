package replicas

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/fax"
)

// faxLease is the fax server's default lease on a claimed step or delivery.
const faxLease = 30 * time.Second

// faxSteps are the events of a delivered fax, in their order.
var faxSteps = []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}

// faxEvent is one webhook the receiver got.
type faxEvent struct {
	ID, Type, FaxID string
}

// receiver collects the fax webhooks, checking each signature with the
// fax service's public key (the same on every replica).
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	key    ed25519.PublicKey
	events []faxEvent
	bad    []string
	added  chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, added: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var env struct {
		Data struct {
			ID        string `json:"id"`
			EventType string `json:"event_type"`
			Payload   struct {
				FaxID string `json:"fax_id"`
			} `json:"payload"`
		} `json:"data"`
	}
	sig, sigErr := base64.StdEncoding.DecodeString(req.Header.Get("Webhook-Signature-Ed25519"))
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := json.Unmarshal(body, &env); err != nil {
		r.bad = append(r.bad, "not JSON: "+string(body))
	} else if sigErr != nil || !ed25519.Verify(r.key, []byte(req.Header.Get("Webhook-Timestamp")+"|"+string(body)), sig) {
		r.bad = append(r.bad, "bad signature on "+env.Data.ID)
	}
	r.events = append(r.events, faxEvent{ID: env.Data.ID, Type: env.Data.EventType, FaxID: env.Data.Payload.FaxID})
	select {
	case r.added <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

// snapshot returns the events so far, by fax, in their order of arrival.
func (r *receiver) snapshot() (byFax map[string][]faxEvent, all []faxEvent, bad []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byFax = map[string][]faxEvent{}
	for _, e := range r.events {
		byFax[e.FaxID] = append(byFax[e.FaxID], e)
	}
	return byFax, append([]faxEvent(nil), r.events...), append([]string(nil), r.bad...)
}

// waitFor waits until done holds on the events, or fails after timeout.
func (r *receiver) waitFor(t *testing.T, timeout time.Duration, what string, done func(byFax map[string][]faxEvent) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond) // an event may have come in between
	defer tick.Stop()
	for {
		byFax, all, _ := r.snapshot()
		if done(byFax) {
			return
		}
		select {
		case <-r.added:
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("%s: not done after %v (%d events of %d faxes)", what, timeout, len(all), len(byFax))
		}
	}
}

// faxTenant is a fax account set up through the admin API to send from
// one number with its webhooks to a receiver.
type faxTenant struct {
	apiKey, connectionID, from, mediaURL string
}

func newFaxTenant(t *testing.T, admin *http.Client, token string, recv *receiver) faxTenant {
	t.Helper()
	var pub struct {
		PublicKey []byte `json:"public_key"`
	}
	mustCall(t, admin, http.MethodGet, "http://admin/fax/webhook_public_key", token, nil, http.StatusOK, &pub)
	recv.mu.Lock()
	recv.key = ed25519.PublicKey(pub.PublicKey)
	recv.mu.Unlock()

	var acct struct {
		APIKey struct {
			Key string `json:"key"`
		} `json:"api_key"`
	}
	mustCall(t, admin, http.MethodPost, "http://admin/fax/accounts", token, map[string]any{"name": "sender"}, http.StatusCreated, &acct)
	var ovp, app struct {
		ID string `json:"id"`
	}
	mustCall(t, admin, http.MethodPost, "http://admin/fax/accounts/sender/outbound_voice_profiles", token, map[string]any{"name": "ovp"}, http.StatusCreated, &ovp)
	mustCall(t, admin, http.MethodPost, "http://admin/fax/accounts/sender/applications", token,
		map[string]any{"name": "app", "webhook_url": recv.srv.URL + "/hooks", "outbound_voice_profile_id": ovp.ID}, http.StatusCreated, &app)
	const from = "+13125550199"
	mustCall(t, admin, http.MethodPut, "http://admin/fax/accounts/sender/numbers/"+from, token,
		map[string]any{"application_id": app.ID}, http.StatusOK, nil)

	doc, err := fax.SamplePDF(1)
	require.NoError(t, err)
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(doc)
	}))
	t.Cleanup(docs.Close)
	return faxTenant{apiKey: acct.APIKey.Key, connectionID: app.ID, from: from, mediaURL: docs.URL + "/doc.pdf"}
}

// send sends one fax to a number that is delivered, through c, and returns
// its id, or the status and body when it is not accepted.
func (f faxTenant) send(ctx context.Context, c *http.Client) (id string, status int, err error) {
	resp, body, err := call(ctx, c, http.MethodPost, "http://fax/v2/faxes", f.apiKey, map[string]any{
		"connection_id": f.connectionID, "to": "+13125550800", "from": f.from, "media_url": f.mediaURL,
	})
	if err != nil {
		return "", 0, err
	}
	if resp.StatusCode != http.StatusAccepted {
		return "", resp.StatusCode, fmt.Errorf("send fax: %d %s", resp.StatusCode, body)
	}
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return "", resp.StatusCode, err
	}
	return out.Data.ID, resp.StatusCode, nil
}

// sendMany sends n faxes through c, workers at once, and returns their ids.
func (f faxTenant) sendMany(t *testing.T, c *http.Client, n, workers int) []string {
	t.Helper()
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				id, _, err := f.send(context.Background(), c)
				if !assert.NoError(t, err) {
					continue
				}
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	require.Len(t, ids, n)
	return ids
}

// complete reports whether every fax of ids has all its steps.
func complete(ids []string) func(map[string][]faxEvent) bool {
	return func(byFax map[string][]faxEvent) bool {
		for _, id := range ids {
			have := map[string]bool{}
			for _, e := range byFax[id] {
				have[e.Type] = true
			}
			if len(have) < len(faxSteps) {
				return false
			}
		}
		return true
	}
}

// rank is the position of an event type in faxSteps, or -1.
func rank(eventType string) int {
	for i, s := range faxSteps {
		if s == eventType {
			return i
		}
	}
	return -1
}

// faxCluster starts three replicas whose fax work may reach loopback (the
// test's receiver, the admin ports' inboxes), with no PAM or fax rate limit
// in the way (the tests send thousands of requests a minute on purpose), and
// the extra flags.
func faxCluster(t *testing.T, extra ...string) (*cluster, []*replica) {
	c := newCluster(t)
	rs := c.start(t, 3, append([]string{"--fax-allow-private-destinations", "--pam-rate-limit", "1000000", "--fax-rate-limit", "1000000"}, extra...)...)
	return c, rs
}

// TestReplicas_FaxesAcrossReplicas: 300 faxes sent across three replicas:
// every event reaches the receiver once, each fax's in order, signed with
// the one key of the service.
func TestReplicas_FaxesAcrossReplicas(t *testing.T) {
	c, rs := faxCluster(t, "--fax-step-interval", "20ms") // the simulator steps fast
	recv := newReceiver(t)
	f := newFaxTenant(t, client("admin", rs...), c.adminToken, recv)
	ids := f.sendMany(t, client("fax", rs...), 300, 12)

	recv.waitFor(t, 2*time.Minute, "every event of 300 faxes", complete(ids))
	byFax, all, bad := recv.snapshot()
	assert.Empty(t, bad)
	seen := map[string]bool{}
	for _, e := range all {
		assert.False(t, seen[e.ID], "event %s (%s of %s) delivered twice", e.ID, e.Type, e.FaxID)
		seen[e.ID] = true
	}
	for _, id := range ids {
		var types []string
		for _, e := range byFax[id] {
			types = append(types, e.Type)
		}
		assert.Equal(t, faxSteps, types, "fax %s: every step once, in order", id)
	}
	assert.Len(t, byFax, len(ids), "no event of a fax nobody sent")
}

// TestReplicas_FaxesSurviveAKilledReplica: the same with one replica killed
// (SIGKILL) while the faxes are under way: every event still arrives (at
// least once), each fax's in order of first arrival, the survivors taking
// over the dead replica's claimed steps and deliveries once their lease
// runs out.
func TestReplicas_FaxesSurviveAKilledReplica(t *testing.T) {
	c, rs := faxCluster(t, "--fax-step-interval", "20ms") // the simulator steps fast
	recv := newReceiver(t)
	f := newFaxTenant(t, client("admin", rs...), c.adminToken, recv)
	first := f.sendMany(t, client("fax", rs...), 150, 12)
	// Kill a replica once the simulators are busy: some of its steps and
	// deliveries are claimed and unfinished.
	recv.waitFor(t, time.Minute, "the first events", func(byFax map[string][]faxEvent) bool { return len(byFax) >= 20 })
	rs[1].kill()
	rest := f.sendMany(t, client("fax", rs[0], rs[2]), 150, 12)
	ids := append(first, rest...)

	// The dead replica's claims end with their lease (fax.Config.Lease, 30 s
	// by default); the survivors finish everything well within a second one.
	recv.waitFor(t, 2*faxLease, "every event of 300 faxes after a crash", complete(ids))
	byFax, _, bad := recv.snapshot()
	assert.Empty(t, bad)
	for _, id := range ids {
		last := -1
		for _, e := range byFax[id] {
			r := rank(e.Type)
			require.GreaterOrEqual(t, r, 0, "fax %s: unexpected %s", id, e.Type)
			// A redelivery repeats an event already delivered (at least
			// once); a new step never comes before an earlier one.
			assert.LessOrEqual(t, r, last+1, "fax %s: %s before the step ahead of it", id, e.Type)
			last = max(last, r)
		}
	}
}

// replicaSandbox is a sandbox made through one replica's admin port: its
// faxes' events go to its inbox on that replica's admin port.
type replicaSandbox struct {
	ID, Token string
	fax       faxTenant
}

func newSandbox(t *testing.T, c *cluster, on *replica) replicaSandbox {
	t.Helper()
	var sb struct {
		ID          string `json:"id"`
		Token       string `json:"token"`
		Credentials struct {
			Fax struct {
				APIKey       string `json:"api_key"`
				ConnectionID string `json:"connection_id"`
				From         string `json:"from"`
			} `json:"fax"`
		} `json:"credentials"`
	}
	mustCall(t, direct(on, "admin"), http.MethodPost, "http://admin/sandboxes", c.adminToken,
		map[string]string{"clock": "frozen"}, http.StatusCreated, &sb)
	f := sb.Credentials.Fax
	return replicaSandbox{ID: sb.ID, Token: sb.Token, fax: faxTenant{apiKey: f.APIKey, connectionID: f.ConnectionID, from: f.From,
		mediaURL: "http://" + on.addr["admin"] + "/fax/sample.pdf"}}
}

// faxStatus reads a fax's status through c.
func faxStatus(t *testing.T, c *http.Client, sb replicaSandbox, id string) string {
	t.Helper()
	var f struct {
		Data struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	mustCall(t, c, http.MethodGet, "http://fax/v2/faxes/"+id, sb.fax.apiKey, nil, http.StatusOK, &f)
	return f.Data.Status
}

// inbox lists the event types sb's inbox acknowledged, by fax id, as its
// webhook log tells them (admin is a client of any replica's admin port:
// the log is in the database).
func inbox(t *testing.T, admin *http.Client, sb replicaSandbox) map[string][]string {
	t.Helper()
	var log struct {
		Data []struct {
			Succeeded bool `json:"succeeded"`
			Event     struct {
				Type  string `json:"type"`
				FaxID string `json:"fax_id"`
			} `json:"event"`
		} `json:"data"`
	}
	mustCall(t, admin, http.MethodGet, "http://admin/sandboxes/"+sb.ID+"/webhooks?limit=1000", sb.Token, nil, http.StatusOK, &log)
	out := map[string][]string{}
	for _, a := range log.Data {
		if a.Succeeded {
			out[a.Event.FaxID] = append(out[a.Event.FaxID], a.Event.Type)
		}
	}
	return out
}

// TestReplicas_SandboxClockAcrossReplicas: sandboxes created on one replica,
// advanced through another, read through a third: the advance answers once
// the fax is delivered with every event, and the other sandbox stays queued.
func TestReplicas_SandboxClockAcrossReplicas(t *testing.T) {
	c, rs := faxCluster(t, "--fax-media-timeout", "2s", "--fax-webhook-timeout", "2s", "--fax-lease", "5s") // a crash is recovered from in seconds
	a := newSandbox(t, c, rs[2])
	b := newSandbox(t, c, rs[2])
	faxA, _, err := a.fax.send(context.Background(), direct(rs[0], "fax"))
	require.NoError(t, err)
	faxB, _, err := b.fax.send(context.Background(), direct(rs[1], "fax"))
	require.NoError(t, err)

	var clk struct {
		Now time.Time `json:"now"`
	}
	mustCall(t, direct(rs[0], "admin"), http.MethodGet, "http://admin/sandboxes/"+a.ID+"/clock", a.Token, nil, http.StatusOK, &clk)
	before := clk.Now
	mustCall(t, direct(rs[1], "admin"), http.MethodPost, "http://admin/sandboxes/"+a.ID+"/clock", a.Token,
		map[string]string{"advance": "10m"}, http.StatusOK, &clk)
	assert.Equal(t, before.Add(10*time.Minute), clk.Now)

	// Read through the third replica: delivered, every event in the inbox of
	// the replica that made the sandbox; B untouched.
	assert.Equal(t, "delivered", faxStatus(t, direct(rs[0], "fax"), a, faxA))
	assert.Equal(t, faxSteps, inbox(t, direct(rs[2], "admin"), a)[faxA])
	assert.Equal(t, "queued", faxStatus(t, direct(rs[0], "fax"), b, faxB))
	mustCall(t, direct(rs[0], "admin"), http.MethodGet, "http://admin/sandboxes/"+a.ID+"/clock", a.Token, nil, http.StatusOK, &clk)
	assert.Equal(t, before.Add(10*time.Minute), clk.Now, "every replica tells the new time")
	mustCall(t, direct(rs[2], "admin"), http.MethodGet, "http://admin/sandboxes/"+b.ID+"/clock", b.Token, nil, http.StatusOK, &clk)
	assert.WithinDuration(t, before, clk.Now, 5*time.Second, "B's clock did not move")

	// The journal, read through the first replica, has A's send.
	var journal struct {
		Data []struct {
			Operation string `json:"operation"`
		} `json:"data"`
	}
	mustCall(t, direct(rs[0], "admin"), http.MethodGet, "http://admin/sandboxes/"+a.ID+"/requests?api=fax&operation=SendFax", a.Token,
		nil, http.StatusOK, &journal)
	assert.Len(t, journal.Data, 1)
}

// TestReplicas_SandboxAdvanceSurvivesAKilledReplica: the replica doing an
// advance is SIGKILLed while it runs the due work; the survivors finish it
// (once the advance's and the fax claims' leases end): every fax delivered,
// every event in the inbox.
func TestReplicas_SandboxAdvanceSurvivesAKilledReplica(t *testing.T) {
	c, rs := faxCluster(t, "--fax-media-timeout", "2s", "--fax-webhook-timeout", "2s", "--fax-lease", "5s") // a crash is recovered from in seconds
	sb := newSandbox(t, c, rs[2])
	const n = 20
	ids := sb.fax.sendMany(t, direct(rs[0], "fax"), n, 4)

	done := make(chan error, 1)
	go func() {
		_, _, err := call(context.Background(), direct(rs[1], "admin"), http.MethodPost, "http://admin/sandboxes/"+sb.ID+"/clock",
			sb.Token, map[string]string{"advance": "10m"})
		done <- err
	}()
	// Kill it once the work began: the first fax left the queue.
	faxes := direct(rs[0], "fax")
	require.Eventually(t, func() bool { return faxStatus(t, faxes, sb, ids[0]) != "queued" },
		30*time.Second, 2*time.Millisecond, "the advance never began")
	rs[1].kill()
	err := <-done
	if err == nil {
		t.Log("the advance answered before the kill: the survivors had nothing left to do")
	}

	// The new time was committed first: every replica left tells it, and
	// the work is finished by the survivors.
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if faxStatus(t, faxes, sb, id) != "delivered" {
				return false
			}
		}
		return true
	}, time.Minute, 50*time.Millisecond, "the faxes were not all delivered after the crash")
	admin := direct(rs[2], "admin")
	require.Eventually(t, func() bool {
		got := inbox(t, admin, sb)
		for _, id := range ids {
			types := got[id]
			if len(types) < len(faxSteps) || types[len(types)-1] != "fax.delivered" {
				return false
			}
		}
		return true
	}, time.Minute, 50*time.Millisecond, "not every event reached the inbox after the crash")
}
