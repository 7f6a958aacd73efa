package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
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

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/dbopen"
	"github.com/apistack/apistack/servers/internal/masterkey"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/validation"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

// serveConfig is what `apistack serve` is told by flags and APISTACK_* variables.
type serveConfig struct {
	DataDir           string
	Database          string
	MasterKeyFile     string
	MasterKey         masterkey.Key
	ShutdownDrain     time.Duration
	PAMAddr           string
	RestaurantAddr    string
	FaxAddr           string
	StorageAddr       string
	AdminAddr         string
	AdminToken        string
	AdminAllowRemote  bool
	AdminTokenFile    string
	SandboxToken      string
	MaxSandboxes      int
	SandboxCreates    int
	JournalBudget     sandbox.JournalBudget
	Demo              bool
	ValidateResponses bool
	LogFormat         string
	LogLevel          string
	ShutdownTimeout   time.Duration
	SQLiteFullSync    bool
	DatabaseMaxConns  int
	CPUProfile        string
	Conn              connLimits
	// APIs are the knobs of every API (--pam-*, --fax-*, ...).
	APIs stack.Settings
	// Destinations are the fax destinations allowed by name (--fax-allow-destination).
	Destinations destinationFlags
}

func parseServeFlags(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := newFlagSet("serve", stderr)
	fs.StringVar(&c.DataDir, "data-dir", "data", "directory of the SQLite databases and demo-credentials.json")
	fs.StringVar(&c.Database, "database", "", "PostgreSQL URL (postgres://user:pass@host:5432/db) shared by every replica; each API keeps its tables in its own schema (default: SQLite files in --data-dir). Requires a master key and an admin token")
	fs.IntVar(&c.DatabaseMaxConns, "database-max-conns", 0, "with --database, the most PostgreSQL connections each API of this replica keeps (default: twice the CPUs, 4 to 8; the statement cache is tuned in the URL: statement_cache_capacity, default_query_exec_mode)")
	fs.StringVar(&c.MasterKeyFile, "master-key-file", "", "file holding the master key, base64 of 32 random bytes (`head -c32 /dev/urandom | base64`), or APISTACK_MASTER_KEY holding the key itself; the fax and storage keys are derived from it (default: a key file per API in --data-dir)")
	fs.DurationVar(&c.ShutdownDrain, "shutdown-drain", 0, "on SIGINT/SIGTERM, how long /readyz answers 503 while requests are still served, so a load balancer stops sending before the ports close")
	fs.StringVar(&c.PAMAddr, "pam-addr", "127.0.0.1:8081", "address of the PAM API")
	fs.StringVar(&c.RestaurantAddr, "restaurant-addr", "127.0.0.1:8084", "address of the restaurant configuration API")
	fs.StringVar(&c.FaxAddr, "fax-addr", "127.0.0.1:8082", "address of the fax API")
	fs.StringVar(&c.StorageAddr, "storage-addr", "127.0.0.1:8083", "address of the storage API")
	fs.StringVar(&c.AdminAddr, "admin-addr", "127.0.0.1:8089", "address of the admin API; on loopback only, unless --admin-allow-remote")
	fs.BoolVar(&c.AdminAllowRemote, "admin-allow-remote", false, "allow an --admin-addr off loopback (the admin API then faces the network, behind its token alone)")
	fs.StringVar(&c.AdminToken, "admin-token", "", "admin API bearer token (default: reused from demo-credentials.json, else random); "+
		"WARNING: a command line is visible to every user of the machine (ps): prefer APISTACK_ADMIN_TOKEN or --admin-token-file")
	fs.StringVar(&c.AdminTokenFile, "admin-token-file", "", "file holding the admin API bearer token (surrounding white space ignored)")
	fs.IntVar(&c.MaxSandboxes, "max-sandboxes", sandbox.DefaultMaxSandboxes, "the most sandboxes this deployment holds, every replica together; a create past it answers 429")
	fs.IntVar(&c.SandboxCreates, "sandbox-creates-per-minute", sandbox.DefaultCreatesPerMinute, "how many sandboxes one token (the creator's or the admin's) may create a minute, in bursts of as many; past it a create answers 429")
	fs.IntVar(&c.JournalBudget.Entries, "sandbox-journal-entries", sandbox.DefaultJournalEntries, "the most request journal entries each sandbox keeps; past it the oldest are dropped")
	fs.Int64Var(&c.JournalBudget.Bytes, "sandbox-journal-bytes", sandbox.DefaultJournalBytes, "the most bytes each sandbox's request journal takes in the database (compressed); past it the oldest entries are dropped")
	fs.StringVar(&c.SandboxToken, "sandbox-token", "", "the sandbox-creator token, which may create sandboxes and do nothing else "+
		"(default: reused from demo-credentials.json, else derived from the admin token, so replicas sharing a --database agree; prefer APISTACK_SANDBOX_TOKEN)")
	fs.BoolVar(&c.Demo, "demo", false, "create the demo tenants and write <data-dir>/demo-credentials.json")
	fs.BoolVar(&c.ValidateResponses, "validate-responses", false, "check every response against the spec and log violations")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "how long in-flight requests get on SIGINT/SIGTERM")
	fs.StringVar(&c.CPUProfile, "cpu-profile", "", "write a CPU profile (pprof) of the whole run to this file, for performance work")
	fs.BoolVar(&c.SQLiteFullSync, "sqlite-full-sync", false, "flush every SQLite commit to the disk (durable against power loss; default: durable against a crash of the process, much faster writes)")
	registerConnFlags(fs, &c.Conn)
	c.APIs.RegisterFlags(fs)
	registerDestinationFlags(fs, &c.Destinations)
	if err := parseCommandFlags(fs, "usage: apistack serve [flags]\n\nEvery flag is also read from APISTACK_<FLAG> (e.g. APISTACK_PAM_ADDR).\n", args); err != nil {
		return c, err
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
	if err := c.loadMasterKey(); err != nil {
		return c, err
	}
	if err := c.checkSandboxLimits(); err != nil {
		return c, err
	}
	if c.DatabaseMaxConns < 0 {
		return c, fmt.Errorf("--database-max-conns %d: want a positive number of connections (0: the default)", c.DatabaseMaxConns)
	}
	if c.Database != "" {
		if c.MasterKey.IsZero() {
			return c, errors.New("--database needs the master key every replica shares: " + masterkey.HowToMake)
		}
		if c.AdminToken == "" {
			return c, errors.New("--database needs the admin token every replica shares: give it with --admin-token-file or APISTACK_ADMIN_TOKEN")
		}
	}
	return c, nil
}

// checkSandboxLimits refuses a sandbox limit that is not a positive
// number: each flag has a default of its own, so a zero or negative value
// can only be a mistake, and silently serving the default instead would
// hide it.
func (c serveConfig) checkSandboxLimits() error {
	limits := []struct {
		flag  string
		value int64
	}{
		{"--max-sandboxes", int64(c.MaxSandboxes)},
		{"--sandbox-creates-per-minute", int64(c.SandboxCreates)},
		{"--sandbox-journal-entries", int64(c.JournalBudget.Entries)},
		{"--sandbox-journal-bytes", c.JournalBudget.Bytes},
	}
	for _, l := range limits {
		if l.value <= 0 {
			return fmt.Errorf("%s %d: want a positive number (leave the flag out for its default)", l.flag, l.value)
		}
	}
	return nil
}

// masterKeyVariable holds the master key itself (not a file name).
const masterKeyVariable = "APISTACK_MASTER_KEY"

// loadMasterKey reads the master key from --master-key-file or
// APISTACK_MASTER_KEY; neither leaves it zero.
func (c *serveConfig) loadMasterKey() error {
	text, inEnv := os.LookupEnv(masterKeyVariable)
	switch {
	case c.MasterKeyFile != "" && inEnv:
		return errors.New("give the master key once: --master-key-file or " + masterKeyVariable + ", not both")
	case c.MasterKeyFile != "":
		k, err := masterkey.ReadFile(c.MasterKeyFile)
		if err != nil {
			return fmt.Errorf("--master-key-file: %w", err)
		}
		c.MasterKey = k
	case inEnv:
		k, err := masterkey.Parse(text)
		if err != nil {
			return fmt.Errorf("%s: %w", masterKeyVariable, err)
		}
		c.MasterKey = k
	}
	return nil
}

// apiKeys gives the key that seals an API's secrets, derived from the
// master key; nil without one (the stack then keeps a key file per API in
// the data directory).
func (c serveConfig) apiKeys() func(api string) ([]byte, error) {
	if c.MasterKey.IsZero() {
		return nil
	}
	return c.MasterKey.Derive
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
	name string
	// ln listens; addr, when set, is the address bound before ln was
	// opened (serve's ports listen only once the stack is ready).
	ln      net.Listener
	addr    *net.TCPAddr
	handler http.Handler
}

// tcpAddr is the listener's address.
func (l listener) tcpAddr() *net.TCPAddr {
	if l.addr != nil {
		return l.addr
	}
	addr, _ := l.ln.Addr().(*net.TCPAddr)
	return addr
}

// baseURL is the URL clients reach the listener at: a wildcard host is
// replaced with loopback, so the printed URLs work from this machine.
func (l listener) baseURL() string {
	addr := l.tcpAddr()
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
	// The token of demo-credentials.json is kept across restarts, with or
	// without --demo, as --admin-token's help says.
	reusedToken := c.AdminToken == "" && previous.Admin != nil && previous.Admin.Token != ""
	if reusedToken {
		c.AdminToken = previous.Admin.Token
	}
	generatedToken := c.AdminToken == ""
	if generatedToken {
		c.AdminToken = stack.NewAdminToken()
	}
	if c.SandboxToken == "" && c.Demo && previous.Sandboxes != nil {
		c.SandboxToken = previous.Sandboxes.Token
	}
	if c.SandboxToken == "" {
		c.SandboxToken = sandboxCreatorToken(c.AdminToken)
	}

	// One pool checks the responses of every API in the background.
	var responseChecks *validation.Background
	if c.ValidateResponses {
		responseChecks = validation.NewBackground(validation.BackgroundConfig{Logger: logger})
	}
	// One telemetry counts every API's requests and events for /metrics (on
	// the admin port) and keeps the web console's request log.
	tel := telemetry.New(requestlog.New(0))
	// Every port is bound from the start (a port in use fails the start at
	// once, and the URLs are known to the demo seeding), but listens only
	// once the databases are opened and migrated, the servers built and the
	// demo seeded: until then a connection is refused, never answered by a
	// stack half-ready. /readyz then answers 200 while the databases
	// answer, and 503 once shutdown starts.
	var dbs []*sql.DB // read only once readiness has started
	readiness := apiserver.NewReadiness(readyProbe(func() []*sql.DB { return dbs }, c.Database != ""))
	var listeners []listener
	var ports []*port
	defer func() {
		for _, p := range ports {
			p.close()
		}
		for _, l := range listeners {
			if l.ln != nil {
				_ = l.ln.Close()
			}
		}
	}()
	for _, api := range []struct{ name, addr string }{
		{stack.PAM, c.PAMAddr}, {stack.Restaurant, c.RestaurantAddr}, {stack.Fax, c.FaxAddr}, {stack.Storage, c.StorageAddr}, {stack.Admin, c.AdminAddr},
	} {
		p, err := reservePort(api.addr)
		if err != nil {
			return fmt.Errorf("%s: listen on %s: %w", api.name, api.addr, err)
		}
		ports = append(ports, p)
		listeners = append(listeners, listener{name: api.name, addr: p.Addr()})
	}

	target := dbopen.Target{URL: c.Database, DataDir: c.DataDir, SQLiteFullSync: c.SQLiteFullSync, MaxConns: c.DatabaseMaxConns}
	// A local stack (every port on loopback, no shared database) may call
	// the developer's own services on loopback.
	c.APIs.Fax.Destinations.AllowLoopback = localStack(listeners, c.Database)
	c.APIs.Fax.Destinations.AllowHosts = c.Destinations.Allow
	st, err := stack.Open(ctx, stack.Config{
		DataDir: c.DataDir, SQLiteFullSync: c.SQLiteFullSync, AdminToken: c.AdminToken, SandboxCreatorToken: c.SandboxToken, Logger: logger,
		MaxSandboxes: c.MaxSandboxes, SandboxCreatesPerMinute: c.SandboxCreates, SandboxJournalBudget: c.JournalBudget,
		OpenDB: func(ctx context.Context, m stack.Migrations) (*sql.DB, error) {
			return dbopen.Open(ctx, target, dbopen.Schema{Name: m.Schema, SQLite: m.SQLite, Postgres: m.Postgres})
		},
		MasterKey: c.apiKeys(), Telemetry: tel,
		ValidateResponses: c.ValidateResponses, ResponseChecks: responseChecks,
		Settings: c.APIs,
	})
	if err != nil {
		return err
	}
	defer st.Close()
	built, err := st.Handlers()
	if err != nil {
		return err
	}
	for _, api := range append(stack.APIs, stack.Sandbox) {
		if db := st.DB(api); db != nil {
			dbs = append(dbs, db)
		}
	}
	// The web console on the admin port; its Requests page reads the last
	// requests of each API, as the telemetry logs them.
	con, err := newConsole(c.AdminToken, consoleServers{pam: st.PAM, restaurant: st.Restaurant, fax: st.Fax, storage: st.Storage, sandboxes: st.Sandboxes}, tel.Log(), st.Inbox, logger)
	if err != nil {
		return err
	}
	built[stack.Admin] = withConsole(built[stack.Admin], con)
	urls := map[string]string{}
	for _, l := range listeners {
		urls[l.name] = l.baseURL()
	}
	if err := st.SetURLs(urls); err != nil {
		return err
	}
	con.SetDocsURLs(docsURLs(urls))
	// The fax simulator and webhook sender run with the servers and stop
	// with them (st.Close); undelivered events wait in the outbox for the
	// next start.
	st.Start(ctx)

	// What the operator is told is printed once the ports listen.
	var tell func()
	if c.Demo {
		var creds demoCredentials
		if target.Shared() {
			creds, previous, err = bootstrapSharedDemo(ctx, target, c.MasterKey, func(previous demoCredentials) (demoCredentials, error) {
				return st.Demo(ctx, previous, urls)
			})
		} else {
			creds, err = st.Demo(ctx, previous, urls)
		}
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if err := writeCredentials(credsPath, creds); err != nil {
			return err
		}
		if err := writeDemoRules(c.DataDir); err != nil {
			return err
		}
		tell = func() {
			printDemoBanner(stdout, credsPath, creds, previous, credsCommandLine(c.DataDir), operatorToken...)
		}
	} else if generatedToken {
		tell = func() { fmt.Fprintf(stdout, "admin token: %s\n", c.AdminToken) }
	} else if reusedToken {
		tell = func() { fmt.Fprintf(stdout, "admin token: the one in %s\n", credsPath) }
	} else {
		tell = func() {
			fmt.Fprintln(stdout, "admin token: the one given (--admin-token-file, APISTACK_ADMIN_TOKEN or --admin-token)")
		}
	}

	// Ready: the ports listen now.
	readiness.Start()
	for i, l := range listeners {
		ln, err := ports[i].listen()
		if err != nil {
			return fmt.Errorf("%s: listen on %s: %w", l.name, l.addr, err)
		}
		listeners[i].ln = ln
		listeners[i].handler = readiness.Wrap(built[l.name])
	}
	servers := startServing(ctx, logger, listeners, c.Conn)
	// On a failed start, the servers stop before the databases close.
	defer servers.close()
	servers.announce()
	tell()
	return servers.wait(ctx, shutdownPlan{drain: c.ShutdownDrain, timeout: c.ShutdownTimeout, readiness: readiness})
}

// shutdownPlan is how runServers stops: readiness (if any) turns 503 at
// once, the ports keep serving for drain, then in-flight requests get up to
// timeout.
type shutdownPlan struct {
	drain, timeout time.Duration
	readiness      *apiserver.Readiness
}

// runServers serves every listener, within limits, until ctx ends, then
// shuts them all down gracefully, giving in-flight requests up to timeout.
func runServers(ctx context.Context, logger *slog.Logger, listeners []listener, limits connLimits, plan shutdownPlan) error {
	s := startServing(ctx, logger, listeners, limits)
	s.announce()
	return s.wait(ctx, plan)
}

// serving is the HTTP servers of the listeners, started by startServing.
type serving struct {
	logger    *slog.Logger
	servers   []*http.Server
	errc      chan error
	listeners []listener
}

// startServing serves every listener, within limits, until wait or close.
func startServing(ctx context.Context, logger *slog.Logger, listeners []listener, limits connLimits) *serving {
	if warning := descriptorShortfall(limits, len(listeners), openFileLimit()); warning != "" {
		logger.Warn(warning)
	}
	errc := make(chan error, len(listeners))
	servers := make([]*http.Server, 0, len(listeners))
	for _, l := range listeners {
		srv := newHTTPServer(ctx, logger, l.handler, limits)
		servers = append(servers, srv)
		ln := limitListener(l.ln, limits, logger)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s: %w", l.name, err)
			}
		}()
	}
	return &serving{logger: logger, servers: servers, errc: errc, listeners: listeners}
}

// announce logs the URL of every listener: once the APIs are built, so
// that an error at start comes before any "listening" line.
func (s *serving) announce() {
	for _, l := range s.listeners {
		s.logger.Info("listening", "api", l.name, "url", l.baseURL())
	}
}

// close stops the servers at once (a start that failed).
func (s *serving) close() {
	for _, srv := range s.servers {
		_ = srv.Close()
	}
}

// wait serves until ctx ends (or a server fails), then shuts the servers
// down gracefully as plan says.
func (s *serving) wait(ctx context.Context, plan shutdownPlan) error {
	logger, errc, servers := s.logger, s.errc, s.servers
	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("shutting down", "drain", plan.drain, "timeout", plan.timeout)
		if plan.readiness != nil {
			plan.readiness.Drain()
		}
		if plan.drain > 0 {
			drained := time.NewTimer(plan.drain)
			select {
			case <-drained.C:
			case serveErr = <-errc:
				drained.Stop()
			}
		}
	case serveErr = <-errc:
		logger.Error("server failed; shutting down", "err", serveErr)
		if plan.readiness != nil {
			plan.readiness.Drain()
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), plan.timeout)
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

// sandboxCreatorToken derives the sandbox-creator token from the admin
// token: every replica given the same admin token makes the same one, and
// the creator token reveals nothing of the admin token.
func sandboxCreatorToken(adminToken string) string {
	mac := hmac.New(sha256.New, []byte(adminToken))
	mac.Write([]byte("apistack sandbox-creator token"))
	return "sbc_" + hex.EncodeToString(mac.Sum(nil))
}
