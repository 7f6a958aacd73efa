// Package apistacktest runs the whole of apistack (the PAM, fax, storage and
// restaurant APIs and the admin API) in the process of a Go test, in one
// line, as net/http/httptest does for a handler:
//
//	st := apistacktest.Start(t, apistacktest.Options{})
//	for g, err := range st.PAM.Groups(ctx, nil) { … }
//
// Every test gets its own stack: its own databases (SQLite in memory), its
// own ports, its own tenants and credentials, so tests run in parallel.
// Time is under the test's control (Stack.Clock): fax steps, webhook
// retries, token and media-link expiry and rate-limit windows move only when
// the test advances it, so no test needs to sleep. Faults can be injected
// per API and operation (Stack.Inject) and into webhook deliveries
// (Stack.Webhooks). Every request the servers receive is checked against its
// API's spec: a request of the test's own service that breaks it fails the
// test, naming the operation, the field and the rule.
package apistacktest

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/faults"
	faxserver "github.com/apistack/apistack/servers/fax"
	pamserver "github.com/apistack/apistack/servers/pam"
	restaurantserver "github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/stack"
	storageserver "github.com/apistack/apistack/servers/storage"
)

// The APIs of a stack, as Inject names them.
const (
	PAM        = stack.PAM
	Fax        = stack.Fax
	Storage    = stack.Storage
	Restaurant = stack.Restaurant
)

// Clock is the stack's time: a fake clock that moves only when told
// (Advance, Set). The servers wait on it: advancing it runs the fax steps
// and webhook retries that come due.
type Clock = clock.Fake

// Settings are the knobs of each API (servers/stack.Settings); the zero
// value is the defaults.
type Settings = stack.Settings

// The knobs of one API, declared in the API's server package.
type (
	PAMSettings        = pamserver.Settings
	FaxSettings        = faxserver.Settings
	StorageSettings    = storageserver.Settings
	RestaurantSettings = restaurantserver.Settings
)

// NewClock returns a Clock set to now.
func NewClock(now time.Time) *Clock { return clock.NewFake(now) }

// Options shape a stack; the zero value is the defaults.
type Options struct {
	// Clock is the stack's time; nil means a new Clock at the current time.
	Clock *Clock
	// FaxWebhookURL is where the fax webhooks of the stack's application
	// go; "" means the stack's own receiver, whose events are in
	// Stack.Inbox. The stack's fax server may reach loopback addresses.
	FaxWebhookURL string
	// Settings are the knobs of each API, as `apistack serve` takes them
	// (0: the API's default): Settings.PAM.TokenTTL, Settings.Fax.StepInterval
	// (one second by default: a fax is delivered after about five steps)...
	Settings
	// AllowInvalidRequests stops the contract check of the requests the
	// stack receives from failing the test (for a test that sends a request
	// that breaks the spec on purpose). Violations are still recorded
	// (Stack.Violations).
	AllowInvalidRequests bool
	// Logger receives the servers' logs; nil discards them.
	Logger *slog.Logger
}

// TB is the part of testing.TB a stack reports to: a *testing.T, or a
// recorder in tests of the kit itself.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

var _ TB = testing.TB(nil)

// Stack is the whole of apistack running for one test.
type Stack struct {
	// The base URL of each API.
	PAMURL, FaxURL, StorageURL, RestaurantURL, AdminURL string
	// Credentials are the stack's tenant of each API, with the shape and
	// keys of `apistack serve --demo`'s demo-credentials.json.
	Credentials stack.Credentials
	// Clients of each API, configured with Credentials and the stack's
	// clock.
	PAM        *pam.Client
	Fax        *faxclient.Client
	Storage    *storage.Client
	Restaurant *restaurant.Client
	// FixtureCredentials are the credentials the fixture (WithFixture)
	// made, under the names it gave them; nil without a fixture or when it
	// made none.
	FixtureCredentials *FixtureCredentials
	// WebhookPublicKey verifies the fax webhooks' signatures.
	WebhookPublicKey ed25519.PublicKey
	// Inbox collects the fax webhooks delivered to the stack's receiver.
	Inbox *Inbox
	// SampleFaxURL serves a two-page PDF the fax server can fetch.
	SampleFaxURL string
	// Clock is the stack's time. A webhook delivery is signed with its
	// time and judged by it (5 minutes of tolerance): one in flight while
	// the clock jumps further is refused and retried, so a test that
	// counts deliveries waits for the one in flight before a long Advance.
	Clock *Clock
	// servers are the stack's servers; tests seed them through the Seed*
	// methods (seed.go), which take the operator code paths of the admin API.
	servers    *stack.Stack
	webhookURL string
	injectors  map[string]*faults.Injector
	webhooks   *faults.Webhooks
	hookRT     http.RoundTripper
	violations violationLog
	closers    []func()
	// remote is the sandbox a connected stack runs on (Connect); nil in
	// process.
	remote *remoteSandbox
}

type violationLog struct {
	mu   sync.Mutex
	list []error
}

func (v *violationLog) add(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.list = append(v.list, err)
}

// Start runs a stack until the test ends (t.Cleanup stops it). A request
// that breaks its spec, and a response of apistack that breaks its own,
// fail the test.
func Start(t TB, opts Options, more ...Option) *Stack {
	t.Helper()
	var done atomic.Bool
	report := func(err error) {
		if !done.Load() {
			t.Errorf("%v", err)
		}
	}
	st, err := open(opts, report, more)
	if err != nil {
		t.Fatalf("apistacktest: start: %v", err)
		return nil
	}
	t.Cleanup(func() { done.Store(true); st.Close() })
	return st
}

// New runs a stack until Close is called, for code without a test (a
// TestMain, an example). Spec violations are recorded (Violations), not
// reported.
func New(opts Options, more ...Option) (*Stack, error) {
	return open(opts, nil, more)
}

func open(opts Options, report func(error), more []Option) (*Stack, error) {
	st := &Stack{}
	o, err := optionsOf(more)
	if err == nil {
		err = st.open(opts, report, o)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func (st *Stack) open(opts Options, report func(error), o options) error {
	ctx := context.Background()
	if opts.Clock == nil {
		opts.Clock = NewClock(time.Now())
	}
	// The stack's servers are on loopback, and so are the tests' receivers.
	opts.Fax.Destinations.AllowPrivate = true
	opts.Fax.StepInterval = cmp.Or(opts.Fax.StepInterval, faxserver.DefaultStepInterval)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	st.Clock, st.Inbox, st.injectors, st.webhooks = opts.Clock, newInbox(), map[string]*faults.Injector{}, &faults.Webhooks{}
	onRequest := func(v faults.Violation) {
		st.violations.add(v)
		if report != nil && !opts.AllowInvalidRequests {
			report(v)
		}
	}
	for _, api := range []string{PAM, Fax, Storage, Restaurant} {
		in, err := faults.New(api, opts.Clock, onRequest)
		if err != nil {
			return err
		}
		st.injectors[api] = in
	}
	dir, err := os.MkdirTemp(stack.TempRoot(), "apistacktest-*")
	if err != nil {
		return fmt.Errorf("apistacktest: data directory: %w", err)
	}
	st.closers = append(st.closers, func() { _ = os.RemoveAll(dir) })
	servers, err := stack.Open(ctx, stack.Config{
		DataDir: dir, OpenDB: stack.OpenFromTemplates(dir, stack.TempRoot()), Clock: opts.Clock, Logger: logger, ValidateResponses: true,
		OnResponseViolation: func(api string, r *http.Request, status int, err error) {
			v := fmt.Errorf("apistack's %s response %d to %s %s breaks its spec: %w", api, status, r.Method, r.URL.Path, err)
			st.violations.add(v)
			if report != nil {
				report(v)
			}
		},
		Faults: st.injectors, Settings: opts.Settings,
		WebhookTransport: func(next http.RoundTripper) http.RoundTripper {
			st.hookRT = next
			return st.webhooks.Transport(next)
		},
	})
	if err != nil {
		return err
	}
	st.servers = servers
	st.closers = append(st.closers, func() { _ = servers.Close() })
	// The requests of the kit's tenants are journaled, as a sandbox's are
	// (Requests).
	servers.Sandboxes.Journal().KeepLocal(stack.DemoSet)
	handlers, err := servers.Handlers()
	if err != nil {
		return err
	}
	urls := map[string]string{}
	for _, api := range stack.APIs {
		hs := httptest.NewServer(handlers[api])
		st.closers = append(st.closers, hs.Close)
		urls[api] = hs.URL
	}
	st.PAMURL, st.FaxURL, st.StorageURL, st.RestaurantURL, st.AdminURL = urls[PAM], urls[Fax], urls[Storage], urls[Restaurant], urls[stack.Admin]
	st.SampleFaxURL = st.AdminURL + stack.FaxSamplePath
	if err := servers.SetURLs(urls); err != nil {
		return err
	}
	st.WebhookPublicKey = servers.Fax.Operator().WebhookPublicKey()
	rs := httptest.NewServer(st.receiver(opts.Clock.Now(), opts.Clock.Now))
	st.closers = append(st.closers, rs.Close)
	st.webhookURL = opts.FaxWebhookURL
	if st.webhookURL == "" {
		st.webhookURL = rs.URL + "/fax-webhooks"
	}
	servers.Start(ctx)
	st.Credentials, err = servers.Seed(ctx, stack.Credentials{}, stack.TenantSet{Name: stack.DemoSet, URLs: urls, WebhookURL: st.webhookURL})
	if err != nil {
		return fmt.Errorf("tenants: %w", err)
	}
	if o.fixture != nil {
		named, err := servers.Fixture(ctx, stack.TenantSet{Name: stack.DemoSet, URLs: urls, WebhookURL: st.webhookURL}, st.Credentials, o.fixture)
		if err != nil {
			return fmt.Errorf("fixture %s: %w", o.fixturePath, err)
		}
		if st.FixtureCredentials, err = fixtureCredentials(named); err != nil {
			return err
		}
	}
	return st.clients()
}

// clients makes the stack's clients from its credentials.
func (st *Stack) clients() (err error) {
	if st.PAM, err = pam.New(st.PAMConfig()); err != nil {
		return err
	}
	if st.Fax, err = faxclient.New(st.FaxConfig()); err != nil {
		return err
	}
	if st.Storage, err = storage.New(st.StorageConfig()); err != nil {
		return err
	}
	st.Restaurant, err = restaurant.New(st.RestaurantConfig())
	return err
}

// PAMConfig is the configuration of a PAM client of the stack's tenant.
func (st *Stack) PAMConfig() pam.Config {
	c := st.Credentials.PAM
	return pam.Config{BaseURL: st.PAMURL, Team: c.Team, KeyID: c.KeyID, KeySecret: c.KeySecret}
}

// FaxConfig is the configuration of a fax client of the stack's account.
func (st *Stack) FaxConfig() faxclient.Config {
	return faxclient.Config{BaseURL: st.FaxURL, APIKey: st.Credentials.Fax.APIKey}
}

// StorageConfig is the configuration of a storage client of the stack's
// account; it signs with the stack's time.
func (st *Stack) StorageConfig() storage.Config {
	c := st.Credentials.Storage
	return storage.Config{Endpoint: st.StorageURL, Region: c.Region, KeyID: c.KeyID, Secret: c.Secret, Now: st.Clock.Now}
}

// RestaurantConfig is the configuration of a restaurant client of the
// stack's restaurant.
func (st *Stack) RestaurantConfig() restaurant.Config {
	c := st.Credentials.Restaurant
	return restaurant.Config{BaseURL: st.RestaurantURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret, Restaurant: c.RestaurantGUID}
}

// Violations returns every spec violation seen so far: requests that broke
// their API's spec (faults.Violation) and responses of apistack that broke
// theirs; connected (Connect), the requests the sandbox's journal lists
// with violations (RequestViolation).
func (st *Stack) Violations() []error {
	if st.remote != nil {
		return st.remoteViolations()
	}
	st.violations.mu.Lock()
	defer st.violations.mu.Unlock()
	return append([]error(nil), st.violations.list...)
}

// Close stops the stack: its servers, fax workers and databases.
func (st *Stack) Close() {
	if st.hookRT != nil {
		_ = st.webhooks.Release(st.hookRT)
	}
	for i := len(st.closers) - 1; i >= 0; i-- {
		st.closers[i]()
	}
	st.closers = nil
}

// SetFaxWebhookURL points the stack's fax application at url, a receiver of
// the test's own (which verifies deliveries with WebhookPublicKey, judging
// their timestamps by Clock.Now).
func (st *Stack) SetFaxWebhookURL(t TB, url string) {
	t.Helper()
	if st.remote != nil {
		if err := st.setRemoteWebhookURL(url); err != nil {
			t.Fatalf("apistacktest: %v", err)
		}
		return
	}
	ctx := context.Background()
	acct, err := st.servers.Fax.Operator().AccountByName(ctx, "demo")
	if err == nil {
		err = st.servers.Fax.Operator().SetApplicationWebhookURL(ctx, acct.ID, st.Credentials.Fax.ConnectionID, url)
	}
	if err != nil {
		t.Fatalf("apistacktest: set the fax webhook URL: %v", err)
	}
	st.webhookURL = url
}
