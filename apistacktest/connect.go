package apistacktest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/faults"
	"github.com/apistack/apistack/servers/stack"
)

// Connect gives the test a Stack backed by a new sandbox of the apistack
// running at url (its admin port, e.g. http://127.0.0.1:8089), created
// with token (the sandbox-creator token of demo-credentials.json's
// `sandboxes` section, or the admin token) and deleted when the test ends.
// The same test code then runs in process (Start) and against a shared
// deployment:
//
//	st := apistacktest.Connect(t, os.Getenv("APISTACK_URL"), os.Getenv("APISTACK_SANDBOX_TOKEN"))
//	st.Clock.Advance(10 * time.Minute) // POST /sandboxes/{id}/clock: the due work has run when it returns
//	sent := st.Requests(t, apistacktest.RequestFilter{Operation: "SendFax"})
//
// What maps onto the sandbox API: the clients and Credentials are the
// sandbox's; Clock is a frozen sandbox clock (Advance and Set move it
// through the API, and Set cannot move it back); Inject, ClearFaults,
// Injected and Webhooks set the sandbox's faults; Requests reads its
// journal; SetFaxWebhookURL points its fax application at a URL through
// the fax API. Inbox is fed from the sandbox's webhook log (GET
// /sandboxes/{id}/webhooks): the deliveries the sandbox's own inbox
// accepted, so the deployment never needs to reach the test (a CI job
// talking to a shared apistack works). Violations are those the journal lists, and each fails the test at its
// end.
//
// What cannot work remotely: the Seed* helpers but SeedTeam of the
// stack's own team without service users (they take the servers'
// operator code paths) fail the test; the timers of Clock (NewTimerAt,
// Timers) are the test's own, not the servers'.
func Connect(t TB, url, token string, more ...Option) *Stack {
	t.Helper()
	st, err := connect(t, url, token, more)
	if err != nil {
		t.Fatalf("apistacktest: connect to %s: %v", url, err)
		return nil
	}
	t.Cleanup(func() {
		for _, v := range st.Violations() {
			t.Errorf("%v", v)
		}
		st.Close()
	})
	return st
}

// remoteSandbox is the sandbox a connected Stack runs on.
type remoteSandbox struct {
	t   TB
	id  string
	api *sandboxapi.ClientWithResponses

	// The Inbox's mirror of the sandbox's webhook duplicate and reorder
	// faults (followLog): those act on the deliveries' transport, which
	// the log does not show. hooks applies them to the deliveries the log
	// lists; planned are the faults set but not yet reached by the log's
	// reader, each for the attempts after a seq.
	mu      sync.Mutex
	hooks   *faults.Webhooks
	planned []plannedHook
	// read is the seq of the last attempt the log's reader handled.
	read atomic.Int64
	// deliver adds a delivery the log lists to the Inbox (followLog).
	deliver http.RoundTripper
	// closed is set once the sandbox is deleted (Close); final holds the
	// violations its journal listed just before.
	closed bool
	final  []error
}

// plannedHook is a webhook fault of the sandbox the Inbox mirrors from the
// attempt after seq on.
type plannedHook struct {
	after int64
	apply func(*faults.Webhooks)
}

// sandboxClient is a client of the sandbox API at url sending token.
func sandboxClient(url, token string) (*sandboxapi.ClientWithResponses, error) {
	return sandboxapi.NewClientWithResponses(strings.TrimSuffix(url, "/"), sandboxapi.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
}

func connect(t TB, url, token string, more []Option) (st *Stack, err error) {
	ctx := context.Background()
	if url == "" || token == "" {
		return nil, errors.New("no URL or no token")
	}
	creator, err := sandboxClient(url, token)
	if err != nil {
		return nil, err
	}
	o, err := optionsOf(more)
	if err != nil {
		return nil, err
	}
	req := map[string]any{"clock": sandboxapi.ClockModeFrozen}
	if o.fixture != nil {
		req["fixture"] = o.fixture
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	created, err := creator.CreateSandboxWithBodyWithResponse(ctx, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("create a sandbox: %w", err)
	}
	if created.JSON201 == nil {
		return nil, fmt.Errorf("create a sandbox: %d %s", created.StatusCode(), created.Body)
	}
	sb := created.JSON201
	own, err := sandboxClient(url, sb.Token)
	if err != nil {
		return nil, err
	}
	st = &Stack{remote: &remoteSandbox{t: t, id: sb.Id, api: own, hooks: &faults.Webhooks{}}, Inbox: newInbox(), AdminURL: strings.TrimSuffix(url, "/"),
		FixtureCredentials: sb.FixtureCredentials}
	st.closers = append(st.closers, func() {
		// What the sandbox's journal holds of violations is read before the
		// sandbox goes, so Violations still answers after Close.
		final := st.remoteViolations()
		st.remote.mu.Lock()
		st.remote.final, st.remote.closed = final, true
		st.remote.mu.Unlock()
		if _, err := own.DeleteSandboxWithResponse(context.Background(), sb.Id); err != nil {
			t.Errorf("apistacktest: delete sandbox %s: %v", sb.Id, err)
		}
	})
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	raw, err := json.Marshal(sb.Credentials)
	if err == nil {
		err = json.Unmarshal(raw, &st.Credentials)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox credentials: %w", err)
	}
	c := st.Credentials
	st.PAMURL, st.FaxURL, st.StorageURL, st.RestaurantURL = c.PAM.BaseURL, c.Fax.BaseURL, c.Storage.Endpoint, c.Restaurant.BaseURL
	st.SampleFaxURL = st.AdminURL + stack.FaxSamplePath
	if st.WebhookPublicKey, err = base64.StdEncoding.DecodeString(c.Fax.WebhookPublicKey); err != nil {
		return nil, fmt.Errorf("the fax webhook public key: %w", err)
	}
	st.Clock = NewClock(sb.Now)
	st.Clock.Follow(st.remote.moveClock)
	if err := st.clients(); err != nil {
		return nil, err
	}
	st.closers = append(st.closers, st.remote.followLog(st.Inbox, st.WebhookPublicKey))
	return st, nil
}

func ptr[T any](v T) *T { return &v }

// receiver is the kit's webhook receiver in process: deliveries verified
// with the stack's key, judged by the time they were signed at when that
// lies between start (the stack's creation) and now (the kit's clock),
// within the usual tolerance. The kit's clock jumps (an Advance of ten
// minutes while a delivery is on its way): a receiver on wall time never
// sees such a jump, so a delivery signed before one is not stale here. The signature is
// always checked; a timestamp after now is judged as any receiver would.
func (st *Stack) receiver(start time.Time, now func() time.Time) http.Handler {
	add := func(_ context.Context, e faxclient.Event) error {
		st.Inbox.add(e)
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		judged := now()
		if ts, err := strconv.ParseInt(r.Header.Get(faxclient.HeaderTimestamp), 10, 64); err == nil {
			// Timestamps are whole seconds.
			if at := time.Unix(ts, 0); !at.Before(start.Truncate(time.Second)) && at.Before(judged) {
				judged = at
			}
		}
		h, err := faxclient.NewWebhookHandler(st.WebhookPublicKey, add, faxclient.WithClock(func() time.Time { return judged }))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Remote reports whether the stack is a sandbox of a running apistack
// (Connect) rather than servers in the test's process (Start).
func (st *Stack) Remote() bool { return st.remote != nil }

// SandboxID is the id of the sandbox a connected stack runs on; "" in
// process.
func (st *Stack) SandboxID() string {
	if st.remote == nil {
		return ""
	}
	return st.remote.id
}

// clockStep is the most one call moves the sandbox's clock: the fax steps
// an advance catches up are signed with their own times, which a receiver
// judges by the kit's clock within 5 minutes (faxclient.DefaultTolerance).
const clockStep = 4 * time.Minute

// moveClock moves the sandbox's clock by d, or to "to", in steps of at
// most clockStep, moving the kit's clock (progress) ahead of each, and
// answers its new time; on failure it fails the test.
func (r *remoteSandbox) moveClock(d time.Duration, to time.Time, progress func(time.Time)) time.Time {
	now, err := r.clockNow()
	if err == nil && !to.IsZero() {
		if d = to.Sub(now); d < 0 {
			now, err = r.changeClock(sandboxapi.ClockChange{Set: &to})
			d = 0
		}
	}
	for first := true; err == nil && (d > 0 || first); first = false {
		step := min(d, clockStep)
		progress(now.Add(step))
		now, err = r.changeClock(sandboxapi.ClockChange{Advance: ptr(step.String())})
		d -= step
	}
	if err != nil {
		r.t.Errorf("apistacktest: move the clock of sandbox %s: %v", r.id, err)
		if got, gerr := r.clockNow(); gerr == nil {
			return got
		}
	}
	return now
}

// clockNow is the sandbox's time.
func (r *remoteSandbox) clockNow() (time.Time, error) {
	resp, err := r.api.GetSandboxClockWithResponse(context.Background(), r.id)
	if err == nil && resp.JSON200 == nil {
		err = fmt.Errorf("%d %s", resp.StatusCode(), resp.Body)
	}
	if err != nil {
		return time.Time{}, err
	}
	return resp.JSON200.Now, nil
}

// changeClock applies change to the sandbox's clock and answers its time.
func (r *remoteSandbox) changeClock(change sandboxapi.ClockChange) (time.Time, error) {
	resp, err := r.api.AdvanceSandboxClockWithResponse(context.Background(), r.id, change)
	if err == nil && resp.JSON200 == nil {
		err = fmt.Errorf("%d %s", resp.StatusCode(), resp.Body)
	}
	if err != nil {
		return time.Time{}, err
	}
	return resp.JSON200.Now, nil
}

// setRemoteWebhookURL points the sandbox's fax application at url.
func (st *Stack) setRemoteWebhookURL(url string) error {
	if _, err := st.Fax.UpdateApplication(context.Background(), st.Credentials.Fax.ConnectionID,
		faxclient.UpdateApplicationParams{WebhookURL: &url}); err != nil {
		return fmt.Errorf("point the sandbox's fax application at %s: %w", url, err)
	}
	st.webhookURL = url
	return nil
}

// faultKinds are the sandbox API's names of the request fault kinds.
var faultKinds = map[FaultKind]sandboxapi.FaultKind{
	RateLimited: sandboxapi.FaultKindRateLimited, Unavailable: sandboxapi.FaultKindUnavailable,
	InternalError: sandboxapi.FaultKindInternalError, Slow: sandboxapi.FaultKindSlow, Drop: sandboxapi.FaultKindDrop,
}

// addFault adds f to the sandbox's faults of api.
func (r *remoteSandbox) addFault(api string, f Fault) error {
	kind, ok := faultKinds[f.Kind]
	if !ok {
		return fmt.Errorf("apistacktest: unknown fault kind %v", f.Kind)
	}
	req := sandboxapi.FaultRequest{Kind: kind, Api: ptr(sandboxapi.FaultAPI(api))}
	if f.Operation != "" {
		req.Operation = &f.Operation
	}
	if f.Count != 0 {
		req.Count = &f.Count
	}
	if f.Share != 0 {
		req.Share = &f.Share
	}
	if f.RetryAfter != 0 {
		req.RetryAfter = ptr(f.RetryAfter.String())
	}
	if f.Delay != 0 {
		req.Delay = ptr(f.Delay.String())
	}
	return r.fault(req)
}

// fault adds req to the sandbox's faults.
func (r *remoteSandbox) fault(req sandboxapi.FaultRequest) error {
	resp, err := r.api.AddSandboxFaultWithResponse(context.Background(), r.id, req)
	if err == nil && resp.JSON201 == nil {
		err = fmt.Errorf("%d %s", resp.StatusCode(), resp.Body)
	}
	if err != nil {
		return fmt.Errorf("apistacktest: add a %s fault to sandbox %s: %w", req.Kind, r.id, err)
	}
	return nil
}

// faults lists the sandbox's faults.
func (r *remoteSandbox) faults() ([]sandboxapi.Fault, error) {
	resp, err := r.api.ListSandboxFaultsWithResponse(context.Background(), r.id)
	if err == nil && resp.JSON200 == nil {
		err = fmt.Errorf("%d %s", resp.StatusCode(), resp.Body)
	}
	if err != nil {
		return nil, fmt.Errorf("apistacktest: list the faults of sandbox %s: %w", r.id, err)
	}
	return resp.JSON200.Data, nil
}

// clearFaults removes the sandbox's faults (and the Inbox's mirror of its
// webhook faults, delivering a held event as the sandbox does).
func (r *remoteSandbox) clearFaults() error {
	r.mu.Lock()
	held := r.hooks
	r.hooks, r.planned = &faults.Webhooks{}, nil
	r.mu.Unlock()
	_ = held.Release(r.deliver)
	resp, err := r.api.ClearSandboxFaultsWithResponse(context.Background(), r.id)
	if err == nil && resp.StatusCode() != http.StatusNoContent {
		err = fmt.Errorf("%d %s", resp.StatusCode(), resp.Body)
	}
	if err != nil {
		return fmt.Errorf("apistacktest: clear the faults of sandbox %s: %w", r.id, err)
	}
	return nil
}

// injected counts the requests of api the faults of kind k took.
func (r *remoteSandbox) injected(api string, k FaultKind) int {
	list, err := r.faults()
	if err != nil {
		r.t.Errorf("%v", err)
		return 0
	}
	n := 0
	for _, f := range list {
		if f.Api != nil && string(*f.Api) == api && f.Kind == faultKinds[k] {
			n += f.Taken
		}
	}
	return n
}

// remoteWebhooks are the webhook faults of a connected stack's sandbox.
type remoteWebhooks struct{ r *remoteSandbox }

// Duplicate sends each of the next n deliveries twice.
func (w remoteWebhooks) Duplicate(n int) {
	w.r.webhookFault(sandboxapi.FaultKindWebhookDuplicate, n, func(h *faults.Webhooks) { h.Duplicate(n) })
}

// Reorder holds each of the next n deliveries back until the one after it
// was sent.
func (w remoteWebhooks) Reorder(n int) {
	w.r.webhookFault(sandboxapi.FaultKindWebhookReorder, n, func(h *faults.Webhooks) { h.Reorder(n) })
}

// webhookFault sets the sandbox's webhook fault of kind for the next n
// deliveries, and plans the Inbox's mirror of it (apply) from the first
// attempt the log lists after it was set.
func (r *remoteSandbox) webhookFault(kind sandboxapi.FaultKind, n int, apply func(*faults.Webhooks)) {
	end, err := r.logEnd()
	if err == nil {
		err = r.fault(sandboxapi.FaultRequest{Kind: kind, Count: &n})
	}
	if err != nil {
		r.t.Errorf("%v", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.planned = append(r.planned, plannedHook{after: end, apply: apply})
}

// WebhookFaulter makes fax webhook deliveries come twice or out of order
// (Stack.Webhooks): in process the kit's transport, connected the
// sandbox's webhook faults.
type WebhookFaulter interface {
	// Duplicate sends each of the next n deliveries twice.
	Duplicate(n int)
	// Reorder holds each of the next n deliveries back until the one
	// after it was sent.
	Reorder(n int)
}

var (
	_ WebhookFaulter = (*faults.Webhooks)(nil)
	_ WebhookFaulter = remoteWebhooks{}
)

// inProcessOnly fails the test when the stack is connected: what helper
// does needs the servers in the test's process.
func (st *Stack) inProcessOnly(t TB, helper string) bool {
	t.Helper()
	if st.remote != nil {
		t.Fatalf("apistacktest: %s works only in process (Start): it takes the servers' operator code paths, which a connected stack (sandbox %s) does not expose", helper, st.remote.id)
		return false
	}
	return true
}

// SandboxCreatorToken is the token that creates sandboxes on an in-process
// stack, whose AdminURL serves the sandbox API:
// Connect(t, st.AdminURL, st.SandboxCreatorToken()) runs a test on a
// sandbox of it as on a deployment's. "" when connected.
func (st *Stack) SandboxCreatorToken() string {
	if st.servers == nil {
		return ""
	}
	return st.servers.SandboxCreatorToken
}
