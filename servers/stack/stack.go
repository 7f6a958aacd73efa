// Package stack assembles the whole of apistack in one process: the PAM,
// fax, storage and restaurant servers and the admin API over them, their
// databases, the fax simulator and webhook sender, and the demo tenants.
// `apistack serve` runs it on its ports; the test kit (apistacktest) runs it
// on httptest servers, one stack per test. There is no other way to start
// the servers together.
//
// The admin port's fax webhook inbox is a receiver built on
// protocol/faxwebhook, the receiving side the fax clients use too.
package stack

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/faults"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/failguard"
	"github.com/apistack/apistack/servers/internal/secretbox"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/validation"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/storage"
)

// The APIs of a stack, by the names of their specs.
const (
	PAM        = "pam"
	Fax        = "fax"
	Storage    = "storage"
	Restaurant = "restaurant"
	Admin      = "admin"
	// Sandbox is the sandbox API, served on the admin port under
	// SandboxesPath.
	Sandbox = "sandbox"
)

// SandboxesPath is where the admin port serves the sandbox API.
const SandboxesPath = "/sandboxes"

// APIs lists the APIs in the order they are started.
var APIs = []string{PAM, Restaurant, Fax, Storage, Admin}

// Config configures a stack: a DataDir (or an OpenDB), and the servers'
// settings, whose zero values are the servers' defaults.
type Config struct {
	// DataDir holds the SQLite databases (unless OpenDB opens them) and the
	// master key files; "" makes fresh keys, and then OpenDB is required.
	DataDir string
	// SQLiteFullSync flushes every commit to the disk.
	SQLiteFullSync bool
	// OpenDB, when set, opens the database of one API (migrated with the
	// migrations given) in place of the SQLite default.
	OpenDB OpenDBFunc
	// Telemetry counts every API's requests and events (/metrics on the
	// admin port) and keeps the console's request log; nil records nothing.
	Telemetry *telemetry.Telemetry
	// MasterKey, when set, gives the key that seals the secrets at rest of
	// each API that has them (fax, storage), by the API's name; nil means
	// the key files of DataDir (<api>-master.key, made on first use), or
	// fresh random keys without a DataDir. Replicas sharing a database must
	// all be given the same (serve derives them from --master-key-file).
	MasterKey func(api string) ([]byte, error)
	// AdminToken guards the admin API; "" makes a random one (Stack.AdminToken).
	AdminToken string
	// Clock is the servers' time; nil means the system clock. Any other
	// clock also makes the fax simulator take the steps a moved clock has
	// passed at once (fax.Config.CatchUpSteps).
	Clock clock.Clock
	// Logger receives the servers' logs; nil means slog.Default().
	Logger *slog.Logger
	// ValidateResponses checks every response against its spec; with
	// ResponseChecks in the background (serve), else before it is sent.
	ValidateResponses bool
	ResponseChecks    *validation.Background
	// DisableValidation turns the spec validation of the APIs that allow it
	// (PAM) off: the benchmarks of what validation costs; see pam.Config.
	DisableValidation bool
	// OnResponseViolation hears of each response that breaks its spec (nil
	// logs it).
	OnResponseViolation func(api string, r *http.Request, status int, err error)
	// Faults are the test kit's fault injectors, per API name; each also
	// hears of the requests that break its API's spec.
	Faults map[string]*faults.Injector
	// WebhookTransport wraps the transport of the webhooks the servers send
	// (the test kit's fault injection; see fax.Config).
	WebhookTransport func(http.RoundTripper) http.RoundTripper
	// SandboxCreatorToken may create sandboxes and do nothing else; ""
	// makes a random one (Stack.SandboxCreatorToken).
	SandboxCreatorToken string
	// SandboxSweepInterval is how often the sandboxes past their TTL are
	// looked for (on Clock); 0 means sandbox.DefaultSweepInterval.
	SandboxSweepInterval time.Duration
	// MaxSandboxes is the most sandboxes the deployment holds; 0 means
	// sandbox.DefaultMaxSandboxes.
	MaxSandboxes int
	// SandboxCreatesPerMinute is how many sandboxes one token may create a
	// minute; 0 means sandbox.DefaultCreatesPerMinute.
	SandboxCreatesPerMinute int
	// SandboxJournalBudget bounds each sandbox's journal; zero bounds mean
	// the defaults.
	SandboxJournalBudget sandbox.JournalBudget
	// SandboxSampleSize is the number of menu items of each sandbox's
	// restaurant configuration; 0 means DefaultSandboxSampleSize.
	SandboxSampleSize int
	// SnapshotLimit is how many sandbox snapshots the deployment holds at
	// most; 0 means sandbox.DefaultSnapshotLimit.
	SnapshotLimit int
	// WrongTokenBurst is how many wrong bearer tokens a source may send to
	// the admin port (the admin and sandbox APIs counted together) before
	// it is refused 429, then one more per 6 seconds; 0 means 10.
	WrongTokenBurst int

	// Settings are the knobs of each API.
	Settings

	// journal is the sandbox API's journal the APIs write into (set by
	// Open).
	journal apiserver.Journal
	// clocks tells each tenant set's clock: the sandboxes' own (set by
	// Open).
	clocks func(set string) clock.Clock
}

// DefaultSandboxSampleSize is the number of menu items of a sandbox's
// restaurant configuration: every resource non-empty, small enough that a
// sandbox is made in milliseconds.
const DefaultSandboxSampleSize = 12

// Settings are the knobs of every API, declared in the API's package (their
// zero values: the API's defaults).
type Settings struct {
	PAM        pam.Settings
	Fax        fax.Settings
	Storage    storage.Settings
	Restaurant restaurant.Settings
}

// RegisterFlags declares the flags of every API's knobs on fs (`apistack
// serve`), bound to s.
func (s *Settings) RegisterFlags(fs *flag.FlagSet) {
	for _, api := range []any{&s.PAM, &s.Restaurant, &s.Fax, &s.Storage} {
		descriptor.RegisterFlags(fs, api)
	}
}

// TenantSet names one isolated set of tenants, one in each API (Stack.Seed).
type TenantSet = descriptor.TenantSet

// DemoSet is the name of the demo tenants' set.
const DemoSet = descriptor.DemoSet

// env is what the stack gives the constructor of api on db (its master
// key aside).
func (c Config) env(api string, db *sql.DB) descriptor.Env {
	e := descriptor.Env{
		Deps: descriptor.Deps{
			DB: db, Clock: c.Clock, Logger: c.Logger, Telemetry: c.Telemetry,
			ValidateResponses: c.ValidateResponses, ResponseChecks: c.ResponseChecks, Journal: c.journal,
			Clocks: c.clocks,
		},
		WebhookTransport: c.WebhookTransport, DisableValidation: c.DisableValidation,
	}
	if in := c.Faults[api]; in != nil {
		e.Hooks = in.Hooks()
	}
	if c.OnResponseViolation != nil {
		e.OnResponseViolation = func(r *http.Request, status int, err error) { c.OnResponseViolation(api, r, status, err) }
	}
	return e
}

// NewServer builds the server of one API as a stack configured by cfg
// does, alone on db with settings: the per-API test harnesses (pamtest) run
// it on a database of their choosing.
func NewServer[S any, Srv descriptor.Server, C any](ctx context.Context, cfg Config, api descriptor.API[S, Srv, C], settings S, db *sql.DB) (Srv, error) {
	e := cfg.env(api.Name, db)
	if api.SealsSecrets {
		key, err := cfg.masterKey(api.Name)
		if err != nil {
			var none Srv
			return none, err
		}
		e.MasterKey = key
	}
	return api.New(ctx, e, settings)
}

// OpenServer opens the database of one API as a stack configured by cfg
// does (cfg.OpenDB, else SQLite in cfg.DataDir) and builds its server on it
// with settings: the per-API test harnesses run one API alone. The caller
// closes the database.
func OpenServer[S any, Srv descriptor.Server, C any](ctx context.Context, cfg Config, api descriptor.API[S, Srv, C], settings S) (Srv, *sql.DB, error) {
	var none Srv
	db, err := cfg.opener()(ctx, api.Migrations())
	if err != nil {
		return none, nil, fmt.Errorf("%s database: %w", api.Name, err)
	}
	srv, err := NewServer(ctx, cfg, api, settings, db)
	if err != nil {
		return none, nil, errors.Join(err, db.Close())
	}
	return srv, db, nil
}

// masterKey is the key that seals api's secrets (Config.MasterKey).
func (c Config) masterKey(api string) ([]byte, error) {
	switch {
	case c.MasterKey != nil:
		return c.MasterKey(api)
	case c.DataDir != "":
		return secretbox.LoadOrCreateKey(filepath.Join(c.DataDir, api+"-master.key"))
	default:
		return randomKey(), nil
	}
}

// Migrations are one API's schema: its name (the PostgreSQL schema, the
// SQLite file's base name) and its goose migrations in each dialect.
type Migrations = descriptor.Migrations

// OpenDBFunc opens (and migrates) the database of one API.
type OpenDBFunc func(ctx context.Context, m Migrations) (*sql.DB, error)

// Stack is the servers of every API over their databases.
type Stack struct {
	// The servers, for operator calls (seed data).
	PAM        *pam.Server
	Fax        *fax.Server
	Storage    *storage.Server
	Restaurant *restaurant.Server
	Admin      *admin.Server
	// AdminToken guards the admin API.
	AdminToken string
	// Sandboxes is the sandbox API (on the admin port under SandboxesPath).
	Sandboxes *sandbox.Server
	// SandboxCreatorToken may create sandboxes and nothing else.
	SandboxCreatorToken string
	// Inbox is the demo webhook receiver of the admin port (FaxInboxPath):
	// the deliveries it verified, kept in this process's memory.
	Inbox *FaxInbox

	cfg    Config
	logger *slog.Logger
	// apis are the tenant APIs (all but admin), in the order of APIs, each
	// with its database and server once opened.
	apis      []api
	sandboxDB *sql.DB
	// wrongTokens limits the wrong tokens of each source on the admin
	// port: the admin API's and the sandbox API's together.
	wrongTokens *failguard.Guard
	urls        map[string]string
	closed      bool
	stopFax     func()
}

// api is one tenant API of a stack.
type api struct {
	descriptor.Bound
	db     *sql.DB
	server descriptor.Server
}

// bind lists the tenant APIs of st, bound to cfg's settings and to st's
// fields for their servers: the one list of the APIs a stack runs.
func (st *Stack) bind(cfg *Config) []api {
	return []api{
		{Bound: pam.API.Bind(&cfg.PAM, &st.PAM)},
		{Bound: restaurant.API.Bind(&cfg.Restaurant, &st.Restaurant)},
		{Bound: fax.API.Bind(&cfg.Fax, &st.Fax)},
		{Bound: storage.API.Bind(&cfg.Storage, &st.Storage)},
	}
}

// Open opens the databases and builds every server. Close releases them.
func Open(ctx context.Context, cfg Config) (*Stack, error) {
	st := &Stack{}
	if err := st.open(ctx, cfg); err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return st, nil
}

func (st *Stack) open(ctx context.Context, cfg Config) error {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = NewAdminToken()
	}
	if cfg.SandboxCreatorToken == "" {
		cfg.SandboxCreatorToken = NewAdminToken()
	}
	st.cfg, st.logger, st.AdminToken, st.SandboxCreatorToken = cfg, logger, cfg.AdminToken, cfg.SandboxCreatorToken
	st.wrongTokens = failguard.New(cfg.WrongTokenBurst, 0, nil)
	st.Inbox = &FaxInbox{}
	st.apis = st.bind(&st.cfg)
	if err := st.openDatabases(ctx); err != nil {
		return err
	}
	if err := st.openSandboxes(ctx); err != nil {
		return err
	}
	st.cfg.journal = st.Sandboxes.Journal()
	st.cfg.clocks = st.Sandboxes.Clocks().For
	// The sandboxes' webhook faults act on their deliveries, outside the
	// kit's.
	kit := st.cfg.WebhookTransport
	st.cfg.WebhookTransport = func(next http.RoundTripper) http.RoundTripper {
		if kit != nil {
			next = kit(next)
		}
		return st.Sandboxes.WebhookTransport(next)
	}
	for i := range st.apis {
		a := &st.apis[i]
		e := st.cfg.env(a.Name(), a.db)
		if a.SealsSecrets() {
			// Key files are made only for a key not given: replicas on a
			// shared database keep no state in their data directory.
			key, err := st.cfg.masterKey(a.Name())
			if err != nil {
				return err
			}
			e.MasterKey = key
		}
		srv, err := a.Open(ctx, e)
		if err != nil {
			return err
		}
		a.server = srv
	}
	var err error
	st.Admin, err = admin.New(admin.Config{
		Token: cfg.AdminToken, PAM: st.PAM.Operator(), Restaurant: st.Restaurant.Operator(), Fax: st.Fax.Operator(), Storage: st.Storage.Operator(),
		Logger: logger, ValidateResponses: cfg.ValidateResponses, ResponseChecks: cfg.ResponseChecks,
		OnResponseViolation: st.cfg.env(Admin, nil).OnResponseViolation, Telemetry: cfg.Telemetry,
		WrongTokens: st.wrongTokens,
	})
	return err
}

// opener opens and migrates the database of an API: with c.OpenDB when
// set, else a SQLite file in c.DataDir. It is the one place a stack opens
// databases.
func (c Config) opener() OpenDBFunc {
	if c.OpenDB != nil {
		return c.OpenDB
	}
	return func(ctx context.Context, m Migrations) (*sql.DB, error) {
		if c.DataDir == "" {
			return nil, errors.New("stack: Config needs a DataDir or an OpenDB")
		}
		return sqlitedb.Open(ctx, filepath.Join(c.DataDir, m.Schema+".db"), m.SQLite, sqlitedb.WithFullSync(c.SQLiteFullSync))
	}
}

// openDatabases opens and migrates the database of every API (opener).
func (st *Stack) openDatabases(ctx context.Context) error {
	open := st.cfg.opener()
	for i := range st.apis {
		m := st.apis[i].Migrations()
		db, err := open(ctx, m)
		if err != nil {
			return fmt.Errorf("%s database: %w", m.Schema, err)
		}
		st.apis[i].db = db
	}
	return nil
}

// Handlers returns the HTTP handler of every API, by name; the admin
// handler also serves the fax demo routes (FaxSamplePath, FaxInboxPath).
func (st *Stack) Handlers() (map[string]http.Handler, error) {
	out := map[string]http.Handler{}
	for _, a := range st.apis {
		h, err := a.server.Handler()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name(), err)
		}
		out[a.Name()] = h
	}
	h, err := st.Admin.Handler()
	if err == nil {
		h, err = withFaxDemoRoutes(h, st.Fax, st.Inbox, st.AdminToken, st.logger)
	}
	if err == nil {
		h, err = st.withSandboxes(h)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Admin, err)
	}
	out[Admin] = h
	return out, nil
}

// SetURLs tells the servers where they are reached, by API name: the fax
// server's signed media links, and the admin port's demo sample and inbox,
// the only loopback URLs the fax server reaches by default.
func (st *Stack) SetURLs(urls map[string]string) error {
	st.urls = maps.Clone(urls)
	st.Fax.SetBaseURL(urls[Fax])
	if err := st.Fax.AllowDestinationPrefixes(urls[Admin] + SandboxesPath + "/"); err != nil { // the sandboxes' inboxes
		return err
	}
	return st.Fax.AllowDestinations(urls[Admin]+FaxSamplePath, urls[Admin]+FaxInboxPath)
}

// Start runs the fax simulator and webhook sender, and the sandbox sweep,
// until ctx ends or Stop or Close is called; undelivered events wait in the outbox for the next start.
func (st *Stack) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = st.Fax.Run(ctx) }()
	go func() { defer wg.Done(); st.Sandboxes.Run(ctx) }()
	st.stopFax = func() { cancel(); wg.Wait() }
}

// Demo creates the demo tenants of `serve --demo` (idempotently: what
// previous names and still works is kept) and returns their credentials;
// urls are the base URL of each API by name.
func (st *Stack) Demo(ctx context.Context, previous Credentials, urls map[string]string) (Credentials, error) {
	return st.Seed(ctx, previous, TenantSet{Name: DemoSet, URLs: urls, SampleSize: demoRestaurantMenuItems})
}

// demoRestaurantMenuItems is the size of the demo restaurant's generated
// configuration: enough menu items that pagination shows (pages hold at
// most 300).
const demoRestaurantMenuItems = 500

// Seed creates one isolated set of tenants, one in each API, named after
// set.Name, and returns their credentials (with the admin section); it is
// idempotent: what previous names and still works is kept.
func (st *Stack) Seed(ctx context.Context, previous Credentials, set TenantSet) (Credentials, error) {
	prev, err := sections(previous)
	if err != nil {
		return Credentials{}, err
	}
	out := map[string]json.RawMessage{}
	for _, a := range st.apis {
		creds, err := a.Seed(ctx, a.server, set, prev[a.Name()])
		if err != nil {
			return Credentials{}, fmt.Errorf("%s: %w", a.Name(), err)
		}
		out[a.Name()] = creds
	}
	if out[Admin], err = json.Marshal(AdminCredentials{BaseURL: set.URLs[Admin], Token: st.AdminToken}); err != nil {
		return Credentials{}, err
	}
	if out["sandboxes"], err = json.Marshal(SandboxCredentials{BaseURL: set.URLs[Admin], Token: st.SandboxCreatorToken}); err != nil {
		return Credentials{}, err
	}
	var creds Credentials
	data, err := json.Marshal(out)
	if err == nil {
		err = json.Unmarshal(data, &creds)
	}
	return creds, err
}

// DB returns the database of the API named api (tests that must corrupt
// or break it), nil for an unknown name.
func (st *Stack) DB(api string) *sql.DB {
	for _, a := range st.apis {
		if a.Name() == api {
			return a.db
		}
	}
	if api == Sandbox {
		return st.sandboxDB
	}
	return nil
}

// Stop stops what Start runs (the fax simulator and webhook sender, the
// sandbox sweep) and waits for it, leaving the databases open: a test then
// reads what they hold once nothing writes. Close calls it.
func (st *Stack) Stop() {
	if st.stopFax != nil {
		st.stopFax()
		st.stopFax = nil
	}
}

// Close stops the fax workers and closes the databases.
func (st *Stack) Close() error {
	st.Stop()
	if st.closed {
		return nil
	}
	st.closed = true
	var errs []error
	if st.Sandboxes != nil {
		st.Sandboxes.Close()
	}
	if st.sandboxDB != nil {
		errs = append(errs, st.sandboxDB.Close())
	}
	for _, a := range st.apis {
		if a.db != nil {
			errs = append(errs, a.db.Close())
		}
	}
	return errors.Join(errs...)
}
