package sandbox_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/clock"
	faxserver "github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/tenantapi"
	"github.com/apistack/apistack/servers/internal/testkit"
	pamserver "github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

// env is a whole stack on httptest servers, on the run's backend, with a
// fake clock.
type env struct {
	st      *stack.Stack
	urls    map[string]string
	clock   *clock.Fake
	admin   *sandboxapi.ClientWithResponses
	creator *sandboxapi.ClientWithResponses
}

type envOptions struct {
	sweep time.Duration
	// pamRateLimit replaces PAM's requests per hour (benchmarks).
	pamRateLimit int
	// faxRateLimit replaces the fax API's requests per minute (benchmarks).
	faxRateLimit int
	// maxSandboxes and createsPerMinute bound the creates (0: the
	// defaults, and creates unthrottled: the tests create many at once).
	maxSandboxes, createsPerMinute int
	// journal bounds each sandbox's journal (zero: the defaults).
	journal sandbox.JournalBudget
	// replica, when set, opens the databases with openDB and shares the
	// tokens and keys of this stack (a replica of the stack of replica).
	replica *replicaOf
}

// replicaOf is what replicas sharing a database share.
type replicaOf struct {
	openDB                   stack.OpenDBFunc
	adminToken, creatorToken string
	masterKey                func(api string) ([]byte, error)
}

func start(t testing.TB, opts envOptions) *env {
	t.Helper()
	cfg := stack.Config{
		DataDir: t.TempDir(), OpenDB: stacktest.OpenDB(t), Clock: clock.NewFake(time.Now()),
		SandboxSweepInterval: opts.sweep, MaxSandboxes: opts.maxSandboxes, SandboxCreatesPerMinute: opts.createsPerMinute,
		SandboxJournalBudget: opts.journal,
		Settings: stack.Settings{
			Fax: faxserver.Settings{StepInterval: faxserver.DefaultStepInterval, RateLimit: opts.faxRateLimit},
			PAM: pamserver.Settings{RateLimit: opts.pamRateLimit},
		},
	}
	if cfg.SandboxCreatesPerMinute == 0 {
		cfg.SandboxCreatesPerMinute = 1 << 20
	}
	if r := opts.replica; r != nil {
		cfg.OpenDB, cfg.AdminToken, cfg.SandboxCreatorToken, cfg.MasterKey = r.openDB, r.adminToken, r.creatorToken, r.masterKey
	}
	return openEnv(t, cfg, true)
}

// openEnv opens a stack on cfg, whose Clock is a *clock.Fake, with every
// response validated (a violation fails t) and errors logged, serves its
// APIs on httptest servers and, when started, runs its workers.
func openEnv(t testing.TB, cfg stack.Config, started bool) *env {
	t.Helper()
	ctx := context.Background()
	cfg.ValidateResponses = true
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	cfg.OnResponseViolation = func(api string, r *http.Request, status int, err error) {
		t.Errorf("%s response %d to %s %s breaks its spec: %v", api, status, r.Method, r.URL.Path, err)
	}
	st, _, urls := stacktest.OpenServed(t, cfg)
	if started {
		st.Start(ctx)
	}
	e := &env{st: st, urls: urls, clock: cfg.Clock.(*clock.Fake)}
	e.admin = e.client(t, st.AdminToken)
	e.creator = e.client(t, st.SandboxCreatorToken)
	return e
}

// client is a generated sandbox API client sending token.
func (e *env) client(t testing.TB, token string) *sandboxapi.ClientWithResponses {
	t.Helper()
	// The answers are checked against the spec (and recorded for the
	// contract coverage); the requests are not: some break it on purpose.
	checked, err := contract.ForAPI(contract.Sandbox, nil, contract.WithoutRequestValidation(),
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	c, err := sandboxapi.NewClientWithResponses(e.urls[stack.Admin], sandboxapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		return nil
	}), sandboxapi.WithHTTPClient(&http.Client{Transport: checked}))
	require.NoError(t, err)
	return c
}

// box is one sandbox as a test uses it: its token's client and a generated
// client of every API on its credentials (apis_test.go).
type box struct {
	*sandboxapi.CreatedSandbox
	api        *sandboxapi.ClientWithResponses
	pam        *tenantapi.PAMClient
	fax        *tenantapi.FaxClient
	storage    *tenantapi.StorageClient
	restaurant *tenantapi.RestaurantClient
	// inbox is what the test's own receiver got (receive), nil until then.
	inbox *stack.FaxInbox
}

func (e *env) create(t testing.TB, body sandboxapi.CreateSandboxRequest) *box {
	t.Helper()
	resp, err := e.creator.CreateSandboxWithResponse(context.Background(), body)
	return e.open(t, testkit.Answered(t, http.StatusCreated, resp, err).JSON201)
}

// frozenClock asks for a sandbox whose clock is frozen.
var frozenClock = sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)}

// pair creates two sandboxes alike, A and B (the isolation tests' pair).
func (e *env) pair(t testing.TB, body sandboxapi.CreateSandboxRequest) (a, b *box) {
	t.Helper()
	return e.create(t, body), e.create(t, body)
}

func (e *env) open(t testing.TB, sb *sandboxapi.CreatedSandbox) *box {
	t.Helper()
	return e.apisOf(t, &box{CreatedSandbox: sb, api: e.client(t, sb.Token)})
}

// sendFax sends the sample document from the sandbox's number to to.
func (e *env) sendFax(t testing.TB, b *box, to string) *tenantapi.Fax {
	t.Helper()
	f, err := b.fax.SendFax(context.Background(), faxapi.SendFaxJSONRequestBody{
		ConnectionId: b.Credentials.Fax.ConnectionId, From: b.Credentials.Fax.From, To: to,
		MediaUrl: e.urls[stack.Admin] + stack.FaxSamplePath,
	})
	require.NoError(t, err)
	return f
}

// journal lists the whole journal of b through its own token.
func journal(t testing.TB, b *box, params *sandboxapi.ListSandboxRequestsParams) []sandboxapi.JournalEntry {
	t.Helper()
	resp, err := b.api.ListSandboxRequestsWithResponse(context.Background(), b.Id, params)
	return testkit.Answered(t, http.StatusOK, resp, err).JSON200.Data
}

// tableCounts counts the rows of every table of every database of the
// stack, by "<api>.<table>".
func (e *env) tableCounts(t testing.TB) map[string]int {
	t.Helper()
	// What the journal writer holds is committed first.
	e.st.Sandboxes.Journal().Flush(context.Background())
	out := map[string]int{}
	for _, api := range []string{stack.PAM, stack.Fax, stack.Storage, stack.Restaurant, stack.Sandbox} {
		db := e.st.DB(api)
		for _, table := range tables(t, db) {
			if api == stack.Sandbox && table == "rate_limits" {
				// The creating token's rate (PostgreSQL keeps it in a table):
				// a create refused once its tenants were being made has spent
				// it, as any request the server worked on; it is the
				// deployment's bookkeeping of who asked, no sandbox's state.
				continue
			}
			var n int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM `+table).Scan(&n), table)
			out[api+"."+table] = n
		}
	}
	return out
}

func tables(t testing.TB, db *sql.DB) []string {
	t.Helper()
	ctx := context.Background()
	name := func(rows *sql.Rows, name *string) error { return rows.Scan(name) }
	out, err := apistore.Collect(ctx, db, name, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version'`)
	if err != nil {
		out, err = apistore.Collect(ctx, db, name, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
			AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version'`)
	}
	require.NoError(t, err)
	require.NotEmpty(t, out)
	sort.Strings(out)
	return out
}

// statusOf is the HTTP status a call answered when it failed (0: it did
// not; -1: no answer came).
func statusOf(err error) int { return tenantapi.Status(err) }

func ptr[T any](v T) *T { return &v }

func label(b *box) string { return fmt.Sprintf("sandbox %s", b.Id) }

// receive points b's fax application at a receiver of the test's own (as a
// consumer's service would be) that verifies each delivery's signature on
// the stack's clock, and returns what it received, in the order it arrived.
// The tests of delivery order and duplicates read it: the webhook log lists
// the sender's attempts, not what reached the receiver.
func (e *env) receive(t testing.TB, b *box) *stack.FaxInbox {
	t.Helper()
	inbox := &stack.FaxInbox{}
	h, err := faxwebhook.NewHandler(e.st.Fax.Operator().WebhookPublicKey(), func(_ context.Context, ev faxwebhook.Event) error {
		inbox.Add(stack.InboxEvent{ID: ev.ID, EventType: ev.Type, FaxID: ev.FaxID, Attempt: ev.Attempt, ReceivedAt: e.clock.Now(), Body: ev.Raw})
		return nil
	}, faxwebhook.WithClock(e.clock.Now))
	require.NoError(t, err)
	e.webhooksTo(t, b, h, "")
	b.inbox = inbox
	return inbox
}

// webhooksTo serves h on a receiver of the test's own, allows its address as
// `serve --fax-allow-destination` would (it is on loopback), points b's fax
// application's webhooks at its path /hooks with query appended, and
// returns the receiver's URL.
func (e *env) webhooksTo(t testing.TB, b *box, h http.Handler, query string) string {
	t.Helper()
	target := httptest.NewServer(h)
	t.Cleanup(target.Close)
	require.NoError(t, e.st.Fax.AllowDestinations(target.URL+"/hooks"))
	require.NoError(t, b.fax.SetWebhookURL(context.Background(), b.Credentials.Fax.ConnectionId, target.URL+"/hooks"+query))
	return target.URL
}

// addFault adds f to b through b's own token and returns it.
func addFault(t testing.TB, b *box, f sandboxapi.FaultRequest) sandboxapi.Fault {
	t.Helper()
	resp, err := b.api.AddSandboxFaultWithResponse(context.Background(), b.Id, f)
	return *testkit.Answered(t, http.StatusCreated, resp, err).JSON201
}

func listFaults(t testing.TB, b *box) []sandboxapi.Fault {
	t.Helper()
	resp, err := b.api.ListSandboxFaultsWithResponse(context.Background(), b.Id)
	return testkit.Answered(t, http.StatusOK, resp, err).JSON200.Data
}

func clearFaults(t testing.TB, b *box) {
	t.Helper()
	resp, err := b.api.ClearSandboxFaultsWithResponse(context.Background(), b.Id)
	testkit.Answered(t, http.StatusNoContent, resp, err)
}

func apiOf(name string) *sandboxapi.FaultAPI { a := sandboxapi.FaultAPI(name); return &a }

// advance moves b's clock by d through its own token and returns the clock.
func advance(t testing.TB, b *box, d string) sandboxapi.SandboxClock {
	t.Helper()
	resp, err := b.api.AdvanceSandboxClockWithResponse(context.Background(), b.Id, sandboxapi.ClockChange{Advance: &d})
	return *testkit.Answered(t, http.StatusOK, resp, err).JSON200
}

// clockOf reads b's clock through its own token.
func clockOf(t testing.TB, b *box) sandboxapi.SandboxClock {
	t.Helper()
	resp, err := b.api.GetSandboxClockWithResponse(context.Background(), b.Id)
	return *testkit.Answered(t, http.StatusOK, resp, err).JSON200
}

// faxStatus reads a fax's status through b's fax client.
func faxStatus(t testing.TB, b *box, id string) faxapi.FaxStatus {
	t.Helper()
	f, err := b.fax.GetFax(context.Background(), id)
	require.NoError(t, err)
	return f.Status
}

// inboxOf lists what b's receiver (receive) got of a fax, in the order it
// arrived.
func inboxOf(b *box, faxID string) []stack.InboxEvent {
	var out []stack.InboxEvent
	for _, ev := range b.inbox.List() {
		if ev.FaxID == faxID {
			out = append(out, ev)
		}
	}
	return out
}

// webhookLog reads b's whole webhook log after after (one page of 1000).
func webhookLog(t testing.TB, b *box, after int64) *sandboxapi.WebhookLogPage {
	t.Helper()
	resp, err := b.api.ListSandboxWebhooksWithResponse(context.Background(), b.Id,
		&sandboxapi.ListSandboxWebhooksParams{After: &after, Limit: ptr(1000)})
	return testkit.Answered(t, http.StatusOK, resp, err).JSON200
}

// driveUntil moves the stack's clock on, a second at a time, until done
// holds for b's webhook log.
func (e *env) driveUntil(t testing.TB, b *box, what string, done func(page *sandboxapi.WebhookLogPage) bool) *sandboxapi.WebhookLogPage {
	t.Helper()
	var page *sandboxapi.WebhookLogPage
	require.Eventually(t, func() bool {
		page = webhookLog(t, b, 0)
		if done(page) {
			return true
		}
		e.clock.Advance(time.Second)
		return false
	}, 30*time.Second, 5*time.Millisecond, "%s: %s never happened", label(b), what)
	return page
}

// delivered reports whether the log shows an acknowledged eventType of fax,
// its outcome recorded.
func delivered(fax, eventType string) func(*sandboxapi.WebhookLogPage) bool {
	return func(p *sandboxapi.WebhookLogPage) bool {
		for _, a := range p.Data {
			if a.Event.FaxId == fax && a.Event.Type == eventType && a.Succeeded && a.Event.State == sandboxapi.WebhookEventStateDelivered {
				return true
			}
		}
		return false
	}
}

func publicKey(t testing.TB, b *box) []byte {
	t.Helper()
	k, err := faxwebhook.ParsePublicKey(b.Credentials.Fax.WebhookPublicKey)
	require.NoError(t, err)
	return k
}

// verify checks an attempt's headers and body as a receiver would.
func (e *env) verify(t testing.TB, b *box, a sandboxapi.WebhookAttempt) {
	t.Helper()
	err := faxwebhook.VerifySignature(publicKey(t, b), a.Headers[faxwebhook.HeaderTimestamp], a.Headers[faxwebhook.HeaderSignature],
		[]byte(a.Body), e.clock.Now(), time.Hour)
	assert.NoError(t, err, "attempt %d of %s", a.Attempt, a.Event.Type)
}

// sendFaxEntry is the journal's entry of b's one SendFax.
func sendFaxEntry(t testing.TB, b *box) sandboxapi.JournalEntry {
	t.Helper()
	entries := journal(t, b, &sandboxapi.ListSandboxRequestsParams{Operation: ptr("SendFax")})
	require.Len(t, entries, 1, label(b))
	return entries[0]
}

// inboxOnly checks that every attempt of b's log is of one of b's faxes,
// went to b's own inbox and was accepted there (its signature verified).
func (e *env) inboxOnly(t testing.TB, b *box, page *sandboxapi.WebhookLogPage, faxIDs ...string) {
	t.Helper()
	for _, a := range page.Data {
		assert.Contains(t, faxIDs, a.Event.FaxId, "%s: an event of another fax in its log", label(b))
		assert.Equal(t, e.urls[stack.Admin]+sandbox.InboxPathOf(b.Id), a.Target, label(b))
		assert.True(t, a.Succeeded, "%s: attempt %d of %s: status %d, error %q", label(b), a.Attempt, a.Event.Type,
			deref(a.StatusCode), deref(a.Error))
		e.verify(t, b, a)
	}
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// triggerInbound makes a fax arrive at b's number and returns its id.
func triggerInbound(t testing.TB, b *box, body sandboxapi.InboundFaxRequest) string {
	t.Helper()
	resp, err := b.api.TriggerInboundFaxWithResponse(context.Background(), b.Id, body)
	return testkit.Answered(t, http.StatusCreated, resp, err).JSON201.FaxId.String()
}

// inboxUntil moves the stack's clock and b's a second at a time until the
// receiver of b (receive) holds the event of type last of fax id, and returns that fax's
// deliveries in the order they arrived.
func (e *env) inboxUntil(t testing.TB, b *box, id, last string) []stack.InboxEvent {
	t.Helper()
	var got []stack.InboxEvent
	require.Eventually(t, func() bool {
		got = inboxOf(b, id)
		done := slices.ContainsFunc(got, func(ev stack.InboxEvent) bool { return ev.EventType == last })
		if !done {
			e.clock.Advance(time.Second)
			// The advance commits the new time first; it then waits for the
			// deliveries due, which a retry waiting on the sandbox's clock
			// may hold (sbx-clock x sbx-faults, reported): it is not waited
			// for past a few seconds.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			resp, err := b.api.AdvanceSandboxClockWithResponse(ctx, b.Id, sandboxapi.ClockChange{Advance: ptr("1s")})
			cancel()
			if err == nil && resp.StatusCode() != http.StatusOK {
				t.Errorf("advance the clock of %s: %d %s", b.Id, resp.StatusCode(), resp.Body)
			}
		}
		return done
	}, 20*time.Second, 10*time.Millisecond, "fax %s: no %s in the inbox", id, last)
	return got
}

// types lists the events' types.
func types(events []stack.InboxEvent) []string {
	out := make([]string, 0, len(events))
	for _, ev := range events {
		out = append(out, ev.EventType)
	}
	return out
}

// use makes one call of every API with b's credentials and checks each
// worked: a PAM group, a fax to a normal test number, a lifecycle
// configuration, a restaurant read.
func (e *env) use(t testing.TB, b *box) (group string, sent *tenantapi.Fax) {
	t.Helper()
	ctx := context.Background()
	group = "g-" + b.Id
	_, err := b.pam.CreateGroup(ctx, group, pamapi.RoleEndUser)
	require.NoError(t, err, label(b))
	sent = e.sendFax(t, b, "+13125550800")
	require.NoError(t, b.storage.PutLifecycle(ctx, b.Credentials.Storage.Bucket, expireTmp), label(b))
	_, err = b.restaurant.GetTipWithholding(ctx)
	require.NoError(t, err, label(b))
	return group, sent
}
