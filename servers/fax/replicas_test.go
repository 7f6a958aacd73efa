package fax

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/egress"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// replica is one fax server of several sharing a database, served over
// HTTP, its loops running until stop (which, like a crash, releases
// nothing).
type replica struct {
	srv  *Server
	url  string
	stop func()
	// posts counts the webhook deliveries this replica made.
	posts atomic.Int64
}

// replicaSet is servers sharing one database and one fake clock, and a
// receiver of their webhooks.
type replicaSet struct {
	t        *testing.T
	db       *sql.DB
	clock    *clock.Fake
	replicas []*replica
	docs     *httptest.Server

	mu       sync.Mutex
	received map[string][]faxwebhook.Event // by fax id, in arrival order
	byID     map[string]int                // deliveries of each event id
	total    int
	progress chan struct{}
	hook     string
	// stall, when set, is a replica whose deliveries the receiver never
	// answers (they end when the replica gives up or stops).
	stall atomic.Pointer[string]
}

// replicaHeader names the replica that sent a webhook, for the receiver.
const replicaHeader = "X-Test-Replica"

// countingTransport counts the requests of a replica's webhook sender and
// names the replica in them.
type countingTransport struct {
	base    http.RoundTripper
	n       *atomic.Int64
	replica string
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	req = req.Clone(req.Context())
	req.Header.Set(replicaHeader, c.replica)
	return c.base.RoundTrip(req)
}

func newReplicaSet(t *testing.T, n int, lease, webhookTimeout time.Duration) *replicaSet {
	t.Helper()
	first, reopen := testdb.OpenTwice(t, testMigrations)
	rs := &replicaSet{t: t, db: first, clock: clock.NewFake(time.Now().UTC()), docs: documents(t),
		received: map[string][]faxwebhook.Event{}, byID: map[string]int{}, progress: make(chan struct{}, 1)}
	masterKey, err := LoadOrCreateMasterKey(filepath.Join(t.TempDir(), "fax-master.key"))
	require.NoError(t, err)
	for i := range n {
		r := &replica{}
		id := fmt.Sprintf("replica-%d", i+1)
		cfg := Config{
			Deps:      Deps{DB: reopen(), Clock: rs.clock, Logger: slog.New(slog.DiscardHandler)},
			MasterKey: masterKey,
			ReplicaID: id,
			Settings: Settings{Lease: lease, WebhookTimeout: webhookTimeout, WebhookAttempts: 3,
				WebhookBackoff: 5 * time.Millisecond, WebhookMaxBackoff: 20 * time.Millisecond,
				Destinations: egress.Options{AllowPrivate: true}},
			WebhookTransport: func(base http.RoundTripper) http.RoundTripper {
				return countingTransport{base: base, n: &r.posts, replica: id}
			},
		}
		s := serve(t, cfg)
		r.srv, r.url, r.stop = s.srv, s.api.URL, s.stop
		rs.replicas = append(rs.replicas, r)
	}
	// Every replica has the same webhook key: it is in the database.
	handler, err := faxwebhook.NewHandler(rs.replicas[0].srv.Operator().WebhookPublicKey(), func(_ context.Context, e faxwebhook.Event) error {
		rs.mu.Lock()
		rs.received[e.FaxID] = append(rs.received[e.FaxID], e)
		rs.byID[e.ID]++
		rs.total++
		rs.mu.Unlock()
		nudge(rs.progress)
		return nil
	}, faxwebhook.WithClock(rs.clock.Now))
	require.NoError(t, err)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if stall := rs.stall.Load(); stall != nil && req.Header.Get(replicaHeader) == *stall {
			// Read the body first: the server notices the client
			// hanging up (and ends the context) only after it.
			_, _ = io.Copy(io.Discard, req.Body)
			<-req.Context().Done()
			return
		}
		handler.ServeHTTP(w, req)
	}))
	t.Cleanup(hook.Close)
	rs.hook = hook.URL + "/"
	return rs
}

// senders are tenants whose requests go to the replicas in turn.
type sender struct {
	app, from string
	apis      []*faxapi.ClientWithResponses
}

// newSender creates an account with its webhooks at the receiver, through
// the first replica, and a client of every replica.
func (rs *replicaSet) newSender(name, from string) sender {
	t := rs.t
	t.Helper()
	_, key, app := newSendingAccount(t, rs.replicas[0].srv.Operator(), name, from, rs.hook)
	s := sender{app: app, from: from}
	for _, r := range rs.replicas {
		s.apis = append(s.apis, keyClient(t, r.url, key))
	}
	return s
}

// newSenders makes n senders, tenant-0… with the numbers +1 312 555 0104….
func (rs *replicaSet) newSenders(n int) []sender {
	rs.t.Helper()
	var senders []sender
	for i := range n {
		senders = append(senders, rs.newSender(fmt.Sprintf("tenant-%d", i), fmt.Sprintf("+1312555010%d", 4+i)))
	}
	return senders
}

// sendAll sends perSender faxes from each sender, each request to the next
// of the first replicas in turn, and returns their ids.
func (rs *replicaSet) sendAll(senders []sender, perSender, replicas int) []string {
	t := rs.t
	t.Helper()
	var ids []string
	turn := 0
	for range perSender {
		for _, s := range senders {
			resp, err := s.apis[turn%replicas].SendFaxWithResponse(context.Background(), faxapi.SendFaxJSONRequestBody{
				ConnectionId: s.app, To: "+14155550123", From: s.from, MediaUrl: rs.docs.URL + "/3-pages.pdf",
			})
			testkit.Answered(t, http.StatusAccepted, resp, err)
			ids = append(ids, resp.JSON202.Data.Id.String())
			turn++
		}
	}
	return ids
}

// received returns how many deliveries the receiver has had.
func (rs *replicaSet) deliveries() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.total
}

// waitAll waits until every fax's final event has arrived.
func (rs *replicaSet) waitAll(ids []string, timeout time.Duration) {
	t := rs.t
	t.Helper()
	deadline := time.After(timeout)
	for {
		missing := 0
		rs.mu.Lock()
		for _, id := range ids {
			evs := rs.received[id]
			if len(evs) == 0 || evs[len(evs)-1].Type != "fax.delivered" {
				missing++
			}
		}
		rs.mu.Unlock()
		if missing == 0 {
			return
		}
		select {
		case <-rs.progress:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%d of %d faxes still lack fax.delivered", missing, len(ids))
		}
	}
}

// outboxTypes returns the types of the events the outbox holds per fax, in
// seq order: one per state change that emits one, so a step taken twice
// shows as a repeated type.
func (rs *replicaSet) outboxTypes() map[string][]string {
	t := rs.t
	t.Helper()
	db := sqldb.New(rs.db, sqldb.Options{})
	rows, err := db.QueryContext(context.Background(), `SELECT fax_id, event_type FROM outbox ORDER BY seq`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, typ string
		require.NoError(t, rows.Scan(&id, &typ))
		out[id] = append(out[id], typ)
	}
	require.NoError(t, rows.Err())
	return out
}

// claimed counts the faxes and pending events replica holds.
func (rs *replicaSet) claimed(replica string) int {
	rs.t.Helper()
	db := sqldb.New(rs.db, sqldb.Options{})
	var faxes, events int
	ctx := context.Background()
	require.NoError(rs.t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM faxes WHERE claimed_by = ?`, replica).Scan(&faxes))
	require.NoError(rs.t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE claimed_by = ? AND delivered_at IS NULL`, replica).Scan(&events))
	return faxes + events
}

// checkEvents checks that the outbox holds each state change of every fax
// of ids once and that the receiver got its events in order: each once, or,
// with again (a takeover may send an event again), each at least once.
func (rs *replicaSet) checkEvents(ids []string, again bool) {
	t := rs.t
	t.Helper()
	stored := rs.outboxTypes()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, id := range ids {
		assert.Equal(t, wantEvents, stored[id], "fax %s: each state change once", id)
		var got []string
		for _, e := range rs.received[id] {
			if !again || len(got) == 0 || got[len(got)-1] != e.Type {
				got = append(got, e.Type)
			}
		}
		assert.Equal(t, wantEvents, got, "fax %s: every event in order, %s", id, map[bool]string{false: "once", true: "at least once"}[again])
	}
}

var wantEvents = []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}

func TestReplicas_EveryEventOnceInOrderAcrossTwoServers(t *testing.T) {
	rs := newReplicaSet(t, 2, 30*time.Second, 2*time.Second)
	senders := rs.newSenders(4)
	ids := rs.sendAll(senders, 26, 2)
	rs.waitAll(ids, 60*time.Second)

	rs.checkEvents(ids, false)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for id, n := range rs.byID {
		assert.Equal(t, 1, n, "event %s delivered once", id)
	}
	assert.Equal(t, len(ids)*len(wantEvents), rs.total)
	for i, r := range rs.replicas {
		t.Logf("replica %d delivered %d events", i+1, r.posts.Load())
		assert.Positive(t, r.posts.Load(), "replica %d took part", i+1)
	}
}

func TestReplicas_ASurvivorTakesOverAfterTheLease(t *testing.T) {
	const lease = 30 * time.Second
	// Replica 2's deliveries hang until it stops: it holds events then.
	rs := newReplicaSet(t, 2, lease, 20*time.Second)
	stalled := "replica-2"
	rs.stall.Store(&stalled)
	senders := rs.newSenders(4)
	ids := rs.sendAll(senders, 13, 2)
	// The crash, mid-run: replica 2's loops end where they are, its claims
	// kept; the faxes sent after it go to replica 1.
	rs.replicas[1].stop()
	held := rs.claimed("replica-2")
	t.Logf("replica 2 stopped holding %d faxes and events, after %d deliveries", held, rs.deliveries())
	require.Positive(t, held, "replica 2 held work when it stopped")
	ids = append(ids, rs.sendAll(senders, 13, 1)...)
	assert.Equal(t, held, rs.claimed("replica-2"), "replica 2's claims wait for their lease")
	rs.stall.Store(nil)
	rs.clock.Advance(lease + time.Second)
	rs.waitAll(ids, 60*time.Second)
	assert.Zero(t, rs.claimed("replica-2"), "replica 2's claims were taken over")

	rs.checkEvents(ids, true)
}
