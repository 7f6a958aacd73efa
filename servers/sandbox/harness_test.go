package sandbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients"
	"github.com/apistack/apistack/clients/contract"
	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/clock"
	faxserver "github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/stacktest"
	pamserver "github.com/apistack/apistack/servers/pam"
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
		SandboxSweepInterval: opts.sweep, Settings: stack.Settings{
			Fax: faxserver.Settings{StepInterval: faxserver.DefaultStepInterval},
			PAM: pamserver.Settings{RateLimit: opts.pamRateLimit},
		},
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
	st, err := stack.Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	handlers, err := st.Handlers()
	require.NoError(t, err)
	urls := map[string]string{}
	for _, api := range stack.APIs {
		hs := httptest.NewServer(handlers[api])
		t.Cleanup(hs.Close)
		urls[api] = hs.URL
	}
	require.NoError(t, st.SetURLs(urls))
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

// box is one sandbox as a test uses it: its token's client and a client of
// every API on its credentials.
type box struct {
	*sandboxapi.CreatedSandbox
	api        *sandboxapi.ClientWithResponses
	pam        *pam.Client
	fax        *faxclient.Client
	storage    *storage.Client
	restaurant *restaurant.Client
	// inbox is what the test's own receiver got (receive), nil until then.
	inbox *stack.FaxInbox
}

func (e *env) create(t testing.TB, body sandboxapi.CreateSandboxRequest) *box {
	t.Helper()
	resp, err := e.creator.CreateSandboxWithResponse(context.Background(), body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode(), string(resp.Body))
	return e.open(t, resp.JSON201)
}

func (e *env) open(t testing.TB, sb *sandboxapi.CreatedSandbox) *box {
	t.Helper()
	// The clients' default retries.
	return e.clientsOf(t, &box{CreatedSandbox: sb, api: e.client(t, sb.Token)}, clients.RetryPolicy{})
}

// sendFax sends the sample document from the sandbox's number to to.
func (e *env) sendFax(t testing.TB, b *box, to string) *faxclient.Fax {
	t.Helper()
	f, err := b.fax.SendFax(context.Background(), faxclient.SendFaxParams{
		ConnectionID: b.Credentials.Fax.ConnectionId, From: b.Credentials.Fax.From, To: to,
		MediaURL: e.urls[stack.Admin] + stack.FaxSamplePath,
	})
	require.NoError(t, err)
	return f
}

// journal lists the whole journal of b through its own token.
func journal(t testing.TB, b *box, params *sandboxapi.ListSandboxRequestsParams) []sandboxapi.JournalEntry {
	t.Helper()
	resp, err := b.api.ListSandboxRequestsWithResponse(context.Background(), b.Id, params)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	return resp.JSON200.Data
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
			var n int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM `+table).Scan(&n), table)
			out[api+"."+table] = n
		}
	}
	return out
}

func tables(t testing.TB, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version'`)
	if err != nil {
		rows, err = db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
			AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version'`)
	}
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		out = append(out, name)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, out)
	sort.Strings(out)
	return out
}

// statusOf is the HTTP status of an ergonomic client's error (0: none).
func statusOf(err error) int {
	var pe *pam.Error
	var fe *faxclient.Error
	var se *storage.Error
	var re *restaurant.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &pe):
		return pe.StatusCode
	case errors.As(err, &fe):
		return fe.StatusCode
	case errors.As(err, &se):
		return se.StatusCode
	case errors.As(err, &re):
		return re.StatusCode
	}
	return -1
}

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
	h, err := faxclient.NewWebhookHandler(e.st.Fax.Operator().WebhookPublicKey(), func(_ context.Context, ev faxclient.Event) error {
		inbox.Add(stack.InboxEvent{ID: ev.ID, EventType: ev.Type, FaxID: ev.FaxID, Attempt: ev.Attempt, ReceivedAt: e.clock.Now(), Body: ev.Raw})
		return nil
	}, faxclient.WithClock(e.clock.Now))
	require.NoError(t, err)
	target := httptest.NewServer(h)
	t.Cleanup(target.Close)
	// The receiver is on loopback: allowed as `serve --fax-allow-destination` would.
	require.NoError(t, e.st.Fax.AllowDestinations(target.URL+"/hooks"))
	url := target.URL + "/hooks"
	_, err = b.fax.UpdateApplication(context.Background(), b.Credentials.Fax.ConnectionId, faxclient.UpdateApplicationParams{WebhookURL: &url})
	require.NoError(t, err)
	b.inbox = inbox
	return inbox
}
