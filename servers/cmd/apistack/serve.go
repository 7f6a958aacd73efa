package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/egress"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/validation"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// serveConfig is what `apistack serve` is told by flags and APISTACK_* variables.
type serveConfig struct {
	DataDir           string
	PAMAddr           string
	RestaurantAddr    string
	FaxAddr           string
	FaxStepInterval   time.Duration
	FaxAllowPrivate   bool
	StorageAddr       string
	StorageRegion     string
	StorageDomain     string
	AdminAddr         string
	AdminToken        string
	AdminAllowRemote  bool
	AdminTokenFile    string
	Demo              bool
	ValidateResponses bool
	LogFormat         string
	LogLevel          string
	TokenTTL          time.Duration
	PAMRateLimit      int
	PAMRatePeriod     time.Duration
	RestaurantRPS     int
	RestaurantLimit   int
	RestaurantPeriod  time.Duration
	ShutdownTimeout   time.Duration
	SQLiteFullSync    bool
	CPUProfile        string
	Conn              connLimits
}

func parseServeFlags(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.DataDir, "data-dir", "data", "directory of the SQLite databases and demo-credentials.json")
	fs.StringVar(&c.PAMAddr, "pam-addr", "127.0.0.1:8081", "address of the PAM API")
	fs.StringVar(&c.RestaurantAddr, "restaurant-addr", "127.0.0.1:8084", "address of the restaurant configuration API")
	fs.StringVar(&c.FaxAddr, "fax-addr", "127.0.0.1:8082", "address of the fax API")
	fs.DurationVar(&c.FaxStepInterval, "fax-step-interval", time.Second, "time between the fax simulator's steps")
	fs.BoolVar(&c.FaxAllowPrivate, "fax-allow-private-destinations", false, "let media_url and webhook URLs reach loopback, private and other non-public addresses (default: public only, plus the admin port's demo sample and inbox)")
	fs.StringVar(&c.StorageAddr, "storage-addr", "127.0.0.1:8083", "address of the storage API")
	fs.StringVar(&c.StorageRegion, "storage-region", storage.DefaultRegion, "region storage requests are signed for")
	fs.StringVar(&c.StorageDomain, "storage-domain", storage.DefaultDomain, "domain of virtual-host-style storage addresses, {bucket}.{region}.{domain}")
	fs.StringVar(&c.AdminAddr, "admin-addr", "127.0.0.1:8089", "address of the admin API; on loopback only, unless --admin-allow-remote")
	fs.BoolVar(&c.AdminAllowRemote, "admin-allow-remote", false, "allow an --admin-addr off loopback (the admin API then faces the network, behind its token alone)")
	fs.StringVar(&c.AdminToken, "admin-token", "", "admin API bearer token (default: reused from demo-credentials.json, else random); "+
		"WARNING: a command line is visible to every user of the machine (ps): prefer APISTACK_ADMIN_TOKEN or --admin-token-file")
	fs.StringVar(&c.AdminTokenFile, "admin-token-file", "", "file holding the admin API bearer token (surrounding white space ignored)")
	fs.BoolVar(&c.Demo, "demo", false, "create the demo tenants and write <data-dir>/demo-credentials.json")
	fs.BoolVar(&c.ValidateResponses, "validate-responses", false, "check every response against the spec and log violations")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.DurationVar(&c.TokenTTL, "pam-token-ttl", time.Hour, "lifetime of PAM bearer tokens")
	fs.IntVar(&c.PAMRateLimit, "pam-rate-limit", 10000, "PAM requests allowed per caller per --pam-rate-period")
	fs.DurationVar(&c.PAMRatePeriod, "pam-rate-period", time.Hour, "PAM rate-limit period")
	fs.IntVar(&c.RestaurantRPS, "restaurant-rate-per-second", 20, "restaurant requests allowed per second per restaurant")
	fs.IntVar(&c.RestaurantLimit, "restaurant-rate-limit", 10000, "restaurant requests allowed per restaurant per --restaurant-rate-period")
	fs.DurationVar(&c.RestaurantPeriod, "restaurant-rate-period", 15*time.Minute, "restaurant rate-limit period")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "how long in-flight requests get on SIGINT/SIGTERM")
	fs.StringVar(&c.CPUProfile, "cpu-profile", "", "write a CPU profile (pprof) of the whole run to this file, for performance work")
	fs.BoolVar(&c.SQLiteFullSync, "sqlite-full-sync", false, "flush every SQLite commit to the disk (durable against power loss; default: durable against a crash of the process, much faster writes)")
	registerConnFlags(fs, &c.Conn)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: apistack serve [flags]\n\nEvery flag is also read from APISTACK_<FLAG> (e.g. APISTACK_PAM_ADDR).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := flagDefaults(fs); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	if err := c.Conn.validate(); err != nil {
		return c, err
	}
	if err := checkAdminAddr(c.AdminAddr, c.AdminAllowRemote); err != nil {
		return c, err
	}
	if c.AdminTokenFile != "" {
		if c.AdminToken != "" {
			return c, errors.New("give the admin token once: --admin-token (or APISTACK_ADMIN_TOKEN) or --admin-token-file, not both")
		}
		token, err := readTokenFile(c.AdminTokenFile)
		if err != nil {
			return c, err
		}
		c.AdminToken = token
	}
	return c, nil
}

func newLogger(c serveConfig, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.LogFormat {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", c.LogFormat)
}

// listener is one API's port.
type listener struct {
	name    string
	ln      net.Listener
	handler http.Handler
}

// baseURL is the URL clients reach the listener at: a wildcard host is
// replaced with loopback, so the printed URLs work from this machine.
func (l listener) baseURL() string {
	addr := l.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	logger, err := newLogger(c, stderr)
	if err != nil {
		return err
	}
	slog.SetDefault(logger)
	if c.CPUProfile != "" {
		stop, err := startCPUProfile(c.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}

	credsPath := filepath.Join(c.DataDir, "demo-credentials.json")
	previous, err := readCredentials(credsPath)
	if err != nil {
		return err
	}
	// A token the operator gave is never printed: they have it already.
	var operatorToken []string
	if c.AdminToken != "" {
		operatorToken = append(operatorToken, c.AdminToken)
	}
	if c.AdminToken == "" && c.Demo && previous.Admin != nil {
		c.AdminToken = previous.Admin.Token
	}
	generatedToken := c.AdminToken == ""
	if generatedToken {
		c.AdminToken = "adm_" + rand.Text()
	}

	// One pool checks the responses of every API in the background.
	var responseChecks *validation.Background
	if c.ValidateResponses {
		responseChecks = validation.NewBackground(validation.BackgroundConfig{Logger: logger})
	}
	// One telemetry counts every API's requests and events for /metrics (on
	// the admin port) and keeps the web console's request log.
	tel := telemetry.New(requestlog.New(0))
	pamDB, err := sqlitedb.Open(ctx, filepath.Join(c.DataDir, "pam.db"), pam.Migrations(), sqlitedb.WithFullSync(c.SQLiteFullSync))
	if err != nil {
		return fmt.Errorf("pam database: %w", err)
	}
	defer pamDB.Close()
	pamServer, err := pam.New(ctx, pam.Config{
		DB: pamDB, TokenTTL: c.TokenTTL, RateLimit: c.PAMRateLimit, RateLimitPeriod: c.PAMRatePeriod,
		Logger: logger, ValidateResponses: c.ValidateResponses, ResponseChecks: responseChecks, Telemetry: tel,
	})
	if err != nil {
		return err
	}
	faxDB, err := fax.OpenDB(ctx, filepath.Join(c.DataDir, "fax.db"), sqlitedb.WithFullSync(c.SQLiteFullSync))
	if err != nil {
		return err
	}
	defer faxDB.Close()
	faxKey, err := fax.LoadOrCreateMasterKey(filepath.Join(c.DataDir, "fax-master.key"))
	if err != nil {
		return err
	}
	faxServer, err := fax.New(ctx, fax.Config{
		DB: faxDB, MasterKey: faxKey, StepInterval: c.FaxStepInterval, Logger: logger, ValidateResponses: c.ValidateResponses, ResponseChecks: responseChecks, Telemetry: tel,
		Destinations: egress.Options{AllowPrivate: c.FaxAllowPrivate},
	})
	if err != nil {
		return err
	}
	restaurantDB, err := sqlitedb.Open(ctx, filepath.Join(c.DataDir, "restaurant.db"), restaurant.Migrations(), sqlitedb.WithFullSync(c.SQLiteFullSync))
	if err != nil {
		return fmt.Errorf("restaurant database: %w", err)
	}
	defer restaurantDB.Close()
	restaurantServer, err := restaurant.New(ctx, restaurant.Config{
		DB: restaurantDB, Logger: logger, ValidateResponses: c.ValidateResponses, ResponseChecks: responseChecks, Telemetry: tel,
		RatePerSecond: c.RestaurantRPS, RatePerWindow: c.RestaurantLimit, RateWindow: c.RestaurantPeriod,
	})
	if err != nil {
		return err
	}
	storageDB, err := sqlitedb.Open(ctx, filepath.Join(c.DataDir, "storage.db"), storage.Migrations(), sqlitedb.WithFullSync(c.SQLiteFullSync))
	if err != nil {
		return fmt.Errorf("storage database: %w", err)
	}
	defer storageDB.Close()
	storageKey, err := storage.LoadOrCreateMasterKey(filepath.Join(c.DataDir, "storage-master.key"))
	if err != nil {
		return err
	}
	storageServer, err := storage.New(storage.Config{
		DB: storageDB, MasterKey: storageKey, Region: c.StorageRegion, Domain: c.StorageDomain, Logger: logger, ValidateResponses: c.ValidateResponses, ResponseChecks: responseChecks, Telemetry: tel,
	})
	if err != nil {
		return err
	}
	adminServer, err := admin.New(admin.Config{
		Token: c.AdminToken, PAM: pamServer, Restaurant: restaurantServer, Fax: faxServer, Storage: storageServer, Logger: logger, ValidateResponses: c.ValidateResponses, ResponseChecks: responseChecks, Telemetry: tel,
	})
	if err != nil {
		return err
	}

	var listeners []listener
	defer func() {
		for _, l := range listeners {
			_ = l.ln.Close()
		}
	}()
	for _, api := range []struct {
		name, addr string
		handler    func() (http.Handler, error)
	}{
		{"pam", c.PAMAddr, pamServer.Handler},
		{"restaurant", c.RestaurantAddr, restaurantServer.Handler},
		{"fax", c.FaxAddr, faxServer.Handler},
		{"storage", c.StorageAddr, storageServer.Handler},
		{"admin", c.AdminAddr, func() (http.Handler, error) {
			h, err := adminServer.Handler()
			if err != nil {
				return nil, err
			}
			return withFaxDemoRoutes(h, faxServer, c.AdminToken, logger)
		}},
	} {
		h, err := api.handler()
		if err != nil {
			return fmt.Errorf("%s: %w", api.name, err)
		}
		ln, err := net.Listen("tcp", api.addr)
		if err != nil {
			return fmt.Errorf("%s: listen on %s: %w", api.name, api.addr, err)
		}
		listeners = append(listeners, listener{name: api.name, ln: ln, handler: h})
	}
	urls := map[string]string{}
	for _, l := range listeners {
		urls[l.name] = l.baseURL()
	}
	faxServer.SetBaseURL(urls["fax"])
	// The admin port's demo sample and inbox are the only loopback URLs the
	// fax server reaches by default.
	if err := faxServer.AllowDestinations(urls["admin"]+faxSamplePath, urls["admin"]+faxInboxPath); err != nil {
		return err
	}
	// The fax simulator and webhook sender run with the servers and stop
	// with them; undelivered events wait in the outbox for the next start.
	faxCtx, stopFax := context.WithCancel(ctx)
	faxDone := make(chan struct{})
	go func() { defer close(faxDone); _ = faxServer.Run(faxCtx) }()
	defer func() { stopFax(); <-faxDone }()

	if c.Demo {
		creds, err := bootstrapDemo(ctx, demoDeps{pam: pamServer, restaurant: restaurantServer, fax: faxServer, storage: storageServer}, previous, urls, c.AdminToken)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if err := writeCredentials(credsPath, creds); err != nil {
			return err
		}
		printDemoBanner(stdout, credsPath, creds, previous, operatorToken...)
	} else if generatedToken {
		fmt.Fprintf(stdout, "admin token: %s\n", c.AdminToken)
	} else {
		fmt.Fprintln(stdout, "admin token: the one given (--admin-token-file, APISTACK_ADMIN_TOKEN or --admin-token)")
	}

	return runServers(ctx, logger, listeners, c.Conn, c.ShutdownTimeout)
}

// runServers serves every listener, within limits, until ctx ends, then
// shuts them all down gracefully, giving in-flight requests up to timeout.
func runServers(ctx context.Context, logger *slog.Logger, listeners []listener, limits connLimits, timeout time.Duration) error {
	if warning := descriptorShortfall(limits, len(listeners), openFileLimit()); warning != "" {
		logger.Warn(warning)
	}
	errc := make(chan error, len(listeners))
	servers := make([]*http.Server, 0, len(listeners))
	for _, l := range listeners {
		srv := newHTTPServer(ctx, logger, l.handler, limits)
		servers = append(servers, srv)
		logger.Info("listening", "api", l.name, "url", l.baseURL())
		ln := limitListener(l.ln, limits)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s: %w", l.name, err)
			}
		}()
	}
	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("shutting down", "timeout", timeout)
	case serveErr = <-errc:
		logger.Error("server failed; shutting down", "err", serveErr)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Shutdown(shutdownCtx); err != nil {
				logger.Warn("shutdown", "err", err)
			}
		}()
	}
	wg.Wait()
	logger.Info("stopped")
	return serveErr
}

// startCPUProfile profiles the process into path until the returned function
// is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
