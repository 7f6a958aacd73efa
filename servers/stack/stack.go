// Package stack assembles the whole of apistack in one process: the PAM,
// fax, storage and restaurant servers and the admin API over them, their
// databases, the fax simulator and webhook sender, and the demo tenants.
// `apistack serve` runs it on its ports; the test kit (apistacktest) runs it
// on httptest servers, one stack per test. There is no other way to start
// the servers together.
//
// Like the binary, this package is where servers and clients meet: the admin
// port's fax webhook inbox is a clients/fax receiver.
package stack

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/faults"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/egress"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/validation"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// The APIs of a stack, by the names of their specs.
const (
	PAM        = "pam"
	Fax        = "fax"
	Storage    = "storage"
	Restaurant = "restaurant"
	Admin      = "admin"
)

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
	// FaxMasterKey and StorageMasterKey seal each API's secrets at rest;
	// nil means the key files of DataDir (made on first use), or fresh
	// random keys without a DataDir. Replicas sharing a database must all
	// be given the same (serve derives them from --master-key-file).
	FaxMasterKey, StorageMasterKey []byte
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
	// OnResponseViolation hears of each response that breaks its spec (nil
	// logs it).
	OnResponseViolation func(api string, r *http.Request, status int, err error)
	// Faults are the test kit's fault injectors, per API name; each also
	// hears of the requests that break its API's spec.
	Faults map[string]*faults.Injector

	// PAMDisableValidation turns the PAM server's spec validation off (the
	// benchmarks of what validation costs; see pam.Config).
	PAMDisableValidation bool
	// RestaurantTokenTTL is the restaurant tokens' lifetime (0: the
	// server's default).
	RestaurantTokenTTL time.Duration
	// PAM: token lifetime and rate limit (0: the server's defaults).
	PAMTokenTTL   time.Duration
	PAMRateLimit  int
	PAMRatePeriod time.Duration
	// Restaurant: rate limits (0: the server's defaults).
	RestaurantRatePerSecond int
	RestaurantRateLimit     int
	RestaurantRatePeriod    time.Duration
	// Fax: the simulator's step interval, the destination policy, and the
	// webhook sender's retries and transport (0 and nil: the defaults).
	FaxStepInterval time.Duration
	FaxAllowPrivate bool
	// FaxAllowLoopback lets fax URLs reach loopback (a stack whose every
	// port is on loopback); FaxAllowDestinations are host:port destinations
	// allowed on any address but link-local and metadata ones.
	FaxAllowLoopback     bool
	FaxAllowDestinations []string
	FaxWebhookAttempts   int
	FaxWebhookBackoff    time.Duration
	FaxWebhookMaxBackoff time.Duration
	FaxWebhookTransport  func(http.RoundTripper) http.RoundTripper
	// Storage: the region and the domain of virtual-host-style addresses
	// ("": the defaults).
	StorageRegion string
	StorageDomain string
}

// violation is what hears of api's responses that break the spec.
func (c Config) violation(api string) func(*http.Request, int, error) {
	if c.OnResponseViolation == nil {
		return nil
	}
	return func(r *http.Request, status int, err error) { c.OnResponseViolation(api, r, status, err) }
}

// NewPAM builds the PAM server of a stack configured by cfg on db: the one
// place a PAM server is made, for the stack and for the PAM test harness
// (servers/pam/pamtest), which runs it alone on a database of its choosing.
func NewPAM(ctx context.Context, cfg Config, db *sql.DB) (*pam.Server, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return pam.New(ctx, pam.Config{
		DB: db, TokenTTL: cfg.PAMTokenTTL, RateLimit: cfg.PAMRateLimit, RateLimitPeriod: cfg.PAMRatePeriod,
		Clock: cfg.Clock, Logger: logger, ValidateResponses: cfg.ValidateResponses, ResponseChecks: cfg.ResponseChecks,
		DisableValidation:   cfg.PAMDisableValidation,
		OnResponseViolation: cfg.violation(PAM), Hooks: cfg.hooks(PAM), Telemetry: cfg.Telemetry,
	})
}

// hooks are the hooks of api's fault injector, if any.
func (c Config) hooks(api string) apiserver.Hooks {
	if in := c.Faults[api]; in != nil {
		return in.Hooks()
	}
	return apiserver.Hooks{}
}

// Migrations are one API's schema: its name (the PostgreSQL schema, the
// SQLite file's base name) and its goose migrations in each dialect.
type Migrations struct {
	Schema           string
	SQLite, Postgres fs.FS
}

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
	// Inbox is the demo webhook receiver of the admin port (FaxInboxPath):
	// the deliveries it verified, kept in this process's memory.
	Inbox *FaxInbox

	cfg     Config
	logger  *slog.Logger
	dbs     databases
	closed  bool
	stopFax func()
}

// Open opens the databases and builds every server. Close releases them.
func Open(ctx context.Context, cfg Config) (*Stack, error) {
	st := &Stack{}
	if err := st.open(ctx, cfg); err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return st, nil
}

func (st *Stack) open(ctx context.Context, cfg Config) (err error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = NewAdminToken()
	}
	st.cfg, st.logger, st.AdminToken = cfg, logger, cfg.AdminToken
	st.Inbox = &FaxInbox{}
	dbs, err := openDatabases(ctx, cfg)
	st.dbs = dbs
	if err != nil {
		return err
	}
	faxKey, storageKey := cfg.FaxMasterKey, cfg.StorageMasterKey
	if faxKey == nil || storageKey == nil {
		// Key files are made only for a key not given: replicas on a shared
		// database keep no state in their data directory.
		fileFax, fileStorage, err := masterKeys(cfg.DataDir)
		if err != nil {
			return err
		}
		if faxKey == nil {
			faxKey = fileFax
		}
		if storageKey == nil {
			storageKey = fileStorage
		}
	}
	violation := cfg.violation
	if st.PAM, err = NewPAM(ctx, cfg, dbs.pam); err != nil {
		return err
	}
	_, systemClock := cfg.Clock.(clock.System)
	if st.Fax, err = fax.New(ctx, fax.Config{
		DB: dbs.fax, MasterKey: faxKey, StepInterval: cfg.FaxStepInterval, CatchUpSteps: cfg.Clock != nil && !systemClock,
		Destinations:    egress.Options{AllowPrivate: cfg.FaxAllowPrivate, AllowLoopback: cfg.FaxAllowLoopback, AllowHosts: cfg.FaxAllowDestinations},
		WebhookAttempts: cfg.FaxWebhookAttempts, WebhookBackoff: cfg.FaxWebhookBackoff, WebhookMaxBackoff: cfg.FaxWebhookMaxBackoff,
		WebhookTransport: cfg.FaxWebhookTransport,
		Clock:            cfg.Clock, Logger: logger, ValidateResponses: cfg.ValidateResponses, ResponseChecks: cfg.ResponseChecks,
		OnResponseViolation: violation(Fax), Hooks: cfg.hooks(Fax), Telemetry: cfg.Telemetry,
	}); err != nil {
		return err
	}
	if st.Restaurant, err = restaurant.New(ctx, restaurant.Config{
		DB: dbs.restaurant, TokenTTL: cfg.RestaurantTokenTTL, RatePerSecond: cfg.RestaurantRatePerSecond, RatePerWindow: cfg.RestaurantRateLimit, RateWindow: cfg.RestaurantRatePeriod,
		Clock: cfg.Clock, Logger: logger, ValidateResponses: cfg.ValidateResponses, ResponseChecks: cfg.ResponseChecks,
		OnResponseViolation: violation(Restaurant), Hooks: cfg.hooks(Restaurant), Telemetry: cfg.Telemetry,
	}); err != nil {
		return err
	}
	if st.Storage, err = storage.New(storage.Config{
		DB: dbs.storage, MasterKey: storageKey, Region: cfg.StorageRegion, Domain: cfg.StorageDomain,
		Clock: cfg.Clock, Logger: logger, ValidateResponses: cfg.ValidateResponses, ResponseChecks: cfg.ResponseChecks,
		OnResponseViolation: violation(Storage), Hooks: cfg.hooks(Storage), Telemetry: cfg.Telemetry,
	}); err != nil {
		return err
	}
	if st.Admin, err = admin.New(admin.Config{
		Token: cfg.AdminToken, PAM: st.PAM, Restaurant: st.Restaurant, Fax: st.Fax, Storage: st.Storage,
		Logger: logger, ValidateResponses: cfg.ValidateResponses, ResponseChecks: cfg.ResponseChecks,
		OnResponseViolation: violation(Admin), Telemetry: cfg.Telemetry,
	}); err != nil {
		return err
	}
	return nil
}

// databases are the database of each API.
type databases struct{ pam, fax, storage, restaurant *sql.DB }

// openDatabases opens and migrates the database of every API: with
// cfg.OpenDB when set, else SQLite files in cfg.DataDir, else SQLite in
// memory. It is the one place a stack opens databases.
func openDatabases(ctx context.Context, cfg Config) (databases, error) {
	open := cfg.OpenDB
	if open == nil {
		if cfg.DataDir == "" {
			return databases{}, errors.New("stack: Config needs a DataDir or an OpenDB")
		}
		open = func(ctx context.Context, m Migrations) (*sql.DB, error) {
			return sqlitedb.Open(ctx, filepath.Join(cfg.DataDir, m.Schema+".db"), m.SQLite, sqlitedb.WithFullSync(cfg.SQLiteFullSync))
		}
	}
	var dbs databases
	for _, d := range []struct {
		m  Migrations
		db **sql.DB
	}{
		{Migrations{PAM, pam.Migrations(), pam.PostgresMigrations()}, &dbs.pam},
		{Migrations{Fax, fax.Migrations(), fax.PostgresMigrations()}, &dbs.fax},
		{Migrations{Restaurant, restaurant.Migrations(), restaurant.PostgresMigrations()}, &dbs.restaurant},
		{Migrations{Storage, storage.Migrations(), storage.PostgresMigrations()}, &dbs.storage},
	} {
		db, err := open(ctx, d.m)
		if err != nil {
			return dbs, fmt.Errorf("%s database: %w", d.m.Schema, err)
		}
		*d.db = db
	}
	return dbs, nil
}

// masterKeys loads (or creates) the fax and storage master keys of dataDir;
// without a directory they are fresh random keys.
func masterKeys(dataDir string) (faxKey, storageKey []byte, err error) {
	if dataDir == "" {
		return randomKey(), randomKey(), nil
	}
	if faxKey, err = fax.LoadOrCreateMasterKey(filepath.Join(dataDir, "fax-master.key")); err != nil {
		return nil, nil, err
	}
	if storageKey, err = storage.LoadOrCreateMasterKey(filepath.Join(dataDir, "storage-master.key")); err != nil {
		return nil, nil, err
	}
	return faxKey, storageKey, nil
}

// Handlers returns the HTTP handler of every API, by name; the admin
// handler also serves the fax demo routes (FaxSamplePath, FaxInboxPath).
func (st *Stack) Handlers() (map[string]http.Handler, error) {
	out := map[string]http.Handler{}
	for _, api := range []struct {
		name    string
		handler func() (http.Handler, error)
	}{
		{PAM, st.PAM.Handler},
		{Restaurant, st.Restaurant.Handler},
		{Fax, st.Fax.Handler},
		{Storage, st.Storage.Handler},
		{Admin, func() (http.Handler, error) {
			h, err := st.Admin.Handler()
			if err != nil {
				return nil, err
			}
			return withFaxDemoRoutes(h, st.Fax, st.Inbox, st.AdminToken, st.logger)
		}},
	} {
		h, err := api.handler()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", api.name, err)
		}
		out[api.name] = h
	}
	return out, nil
}

// SetURLs tells the servers where they are reached, by API name: the fax
// server's signed media links, and the admin port's demo sample and inbox,
// the only loopback URLs the fax server reaches by default.
func (st *Stack) SetURLs(urls map[string]string) error {
	st.Fax.SetBaseURL(urls[Fax])
	return st.Fax.AllowDestinations(urls[Admin]+FaxSamplePath, urls[Admin]+FaxInboxPath)
}

// Start runs the fax simulator and webhook sender until ctx ends or Close
// is called; undelivered events wait in the outbox for the next start.
func (st *Stack) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = st.Fax.Run(ctx) }()
	st.stopFax = func() { cancel(); wg.Wait() }
}

// Demo creates the demo tenants of `serve --demo` (idempotently: what
// previous names and still works is kept) and returns their credentials;
// urls are the base URL of each API by name.
func (st *Stack) Demo(ctx context.Context, previous Credentials, urls map[string]string) (Credentials, error) {
	return st.DemoWith(ctx, previous, urls, DemoOptions{RestaurantMenuItems: demoRestaurantMenuItems})
}

// DemoOptions shape the demo tenants.
type DemoOptions struct {
	// RestaurantMenuItems is the size of the demo restaurant's generated
	// configuration; 0 creates the restaurant with no configuration.
	RestaurantMenuItems int
	// FaxWebhookURL is where the demo fax application's webhooks go; ""
	// means the admin port's inbox.
	FaxWebhookURL string
}

// DemoWith is Demo shaped by opts.
func (st *Stack) DemoWith(ctx context.Context, previous Credentials, urls map[string]string, opts DemoOptions) (Credentials, error) {
	return bootstrapDemo(ctx, demoServers{pam: st.PAM, restaurant: st.Restaurant, fax: st.Fax, storage: st.Storage}, previous, urls, st.AdminToken, opts)
}

// DB returns the database of the API named api (tests that must corrupt
// or break it), nil for an unknown name.
func (st *Stack) DB(api string) *sql.DB {
	return map[string]*sql.DB{PAM: st.dbs.pam, Fax: st.dbs.fax, Storage: st.dbs.storage, Restaurant: st.dbs.restaurant}[api]
}

// Close stops the fax workers and closes the databases.
func (st *Stack) Close() error {
	if st.stopFax != nil {
		st.stopFax()
		st.stopFax = nil
	}
	if st.closed {
		return nil
	}
	st.closed = true
	var errs []error
	for _, db := range []*sql.DB{st.dbs.pam, st.dbs.fax, st.dbs.storage, st.dbs.restaurant} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}
