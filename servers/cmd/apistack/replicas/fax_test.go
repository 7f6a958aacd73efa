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

// faxCluster starts three replicas whose fax simulator steps fast and may
// reach the test's loopback receiver.
func faxCluster(t *testing.T) (*cluster, []*replica) {
	c := newCluster(t)
	rs := c.start(t, 3, "--fax-step-interval", "20ms", "--fax-allow-private-destinations", "--pam-rate-limit", "1000000")
	return c, rs
}

// TestReplicas_FaxesAcrossReplicas: 300 faxes sent across three replicas:
// every event reaches the receiver once, each fax's in order, signed with
// the one key of the service.
func TestReplicas_FaxesAcrossReplicas(t *testing.T) {
	c, rs := faxCluster(t)
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
	c, rs := faxCluster(t)
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
