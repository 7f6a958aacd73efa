package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"time"

	"github.com/apistack/apistack/clients/contract"
	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy"
	"github.com/apistack/apistack/servers/internal/har"
)

const proxyUsage = `usage: apistack proxy --api pam|fax|storage|restaurant --upstream URL [--addr HOST:PORT] [--record FILE.har] [flags]
       apistack proxy --api storage --forward [--addr HOST:PORT] [--record FILE.har] [flags]
       apistack proxy --api fax --webhooks --upstream RECEIVER_URL [--webhook-public-key BASE64] [flags]

A validating, recording proxy in front of a real service. Every request and
answer passes unchanged and streamed; each exchange is checked against the
API's spec and recorded as a HAR 1.2 entry with its operation (_operation)
and its violations (_violations), secrets redacted. A live summary is served
at GET /_apistack/report on --addr and printed at exit (SIGINT or SIGTERM,
after which the HAR is complete).

--forward makes it a forward HTTP proxy (point HTTP_PROXY at it): requests
keep their own host, so a signature made for the real host (storage's)
still holds. https is not intercepted: record it elsewhere and check the
HAR with apistack conform --har.

--webhooks puts it in front of a webhook receiver: the fax service's
deliveries are checked against specs/fax/webhooks.yaml, their signature
verified with --webhook-public-key.

Exit status: 0, or 1 with --fail-on-violation when any violation was seen,
2 on a usage error.

flags:
`

// proxyCommand is `apistack proxy`.
func proxyCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("proxy", stderr)
	api := fs.String("api", "", "the API the traffic is held to: pam, fax, storage or restaurant")
	upstream := fs.String("upstream", "", "the real service's base URL (the receiver's, with --webhooks)")
	addr := fs.String("addr", "127.0.0.1:9080", "the address the proxy listens on")
	record := fs.String("record", "", "the HAR file to record the exchanges in (none when empty)")
	bodyCap := byteSize(harproxy.DefaultBodyCap)
	fs.Var(&bodyCap, "body-cap", "the most bytes of one body checked and recorded (the rest passes, unrecorded)")
	bodyMemory := byteSize(harproxy.DefaultBodyMemory)
	fs.Var(&bodyMemory, "body-memory", "the most bytes of the bodies of all exchanges in flight kept at once (a body beyond it is recorded cut)")
	failOnViolation := fs.Bool("fail-on-violation", false, "exit 1 when any exchange broke the spec")
	forward := fs.Bool("forward", false, "be a forward HTTP proxy: each request goes to its own URL, its Host unchanged")
	webhooks := fs.Bool("webhooks", false, "check fax webhook deliveries (specs/fax/webhooks.yaml) passed on to --upstream")
	publicKey := fs.String("webhook-public-key", "", "the base64 Ed25519 public key webhook signatures are verified with")
	cpuProfile := fs.String("cpu-profile", "", "write a CPU profile (pprof) of the whole run to this file, for performance work")
	if err := parseCommandFlags(fs, proxyUsage, args); err != nil {
		return err
	}
	cfg := harproxy.Config{Forward: *forward, BodyCap: int64(bodyCap), BodyMemory: int64(bodyMemory),
		Logger: slog.New(slog.NewTextHandler(stderr, nil))}
	switch *api {
	case "pam", "fax", "storage", "restaurant":
		cfg.API = contract.API(*api)
	default:
		return fmt.Errorf("proxy: --api %q: want pam, fax, storage or restaurant (see apistack proxy -h)", *api)
	}
	if *webhooks {
		if cfg.API != contract.Fax {
			return errors.New("proxy: --webhooks is for --api fax")
		}
		cfg.API = contract.FaxWebhooks
	}
	if *publicKey != "" {
		if !*webhooks {
			return errors.New("proxy: --webhook-public-key needs --webhooks")
		}
		key, err := faxclient.ParseWebhookPublicKey(*publicKey)
		if err != nil {
			return fmt.Errorf("proxy: --webhook-public-key: %w", err)
		}
		cfg.WebhookPublicKey = key
	}
	switch {
	case *forward && *upstream != "":
		return errors.New("proxy: --forward sends each request to its own URL: give no --upstream")
	case *forward && *webhooks:
		return errors.New("proxy: --webhooks needs the receiver as --upstream, not --forward")
	case !*forward:
		u, err := url.Parse(*upstream)
		if *upstream == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("proxy: --upstream %q: want the http(s) base URL of the service (see apistack proxy -h)", *upstream)
		}
		cfg.Upstream = u
	}
	if bodyCap <= 0 || bodyMemory <= 0 {
		return errors.New("proxy: --body-cap and --body-memory must be positive")
	}
	tuneGC()
	if *record != "" {
		w, err := har.Create(*record, har.Log{
			Creator: har.Creator{Name: "apistack proxy", Version: buildVersion()},
			Comment: fmt.Sprintf("recorded by apistack proxy --api %s; each body kept up to %d bytes (_bodyCap), cut bodies marked _truncated", *api, int64(bodyCap)),
			BodyCap: int64(bodyCap),
		})
		if err != nil {
			return fmt.Errorf("proxy: --record: %w", err)
		}
		cfg.Record = w
		defer w.Close()
	}
	p, err := harproxy.New(cfg)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	to := *upstream
	if *forward {
		to = "each request's own URL"
	}
	fmt.Fprintf(stdout, "apistack proxy (%s) on http://%s -> %s", cfg.API, ln.Addr(), to)
	if *record != "" {
		fmt.Fprintf(stdout, ", recording %s", *record)
	}
	fmt.Fprintf(stdout, "\nlive summary: http://%s%s\n", ln.Addr(), harproxy.ReportPath)

	select {
	case err = <-served:
		err = fmt.Errorf("proxy: %w", err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(shutdown)
		cancel()
		if err != nil {
			err = fmt.Errorf("proxy: shutdown: %w", err)
		}
	}
	p.Wait()
	if cfg.Record != nil {
		if cerr := cfg.Record.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("proxy: %w", cerr)
		}
	}
	sum := p.Report()
	if werr := sum.WriteText(stdout); werr != nil && err == nil {
		err = werr
	}
	if err == nil && *failOnViolation && sum.Violations > 0 {
		return &checksFailed{summary: fmt.Sprintf("%d violations in %d exchanges", sum.Violations, sum.Exchanges)}
	}
	return err
}

// tuneGC sets the proxy's garbage collection, unless the environment does
// (GOGC, GOMEMLIMIT). Its scanned heap is small (the spec, the exchanges in
// flight; bodies are plain bytes the collector does not scan), and
// collecting whenever the heap doubled spent about a sixth of a busy
// proxy's CPU checking and recording (BenchmarkProxyExchange_PAMList). It
// collects at five times the live heap instead, within a soft limit of
// gcSoftLimit, so the process stays as small as before when large bodies
// fill the heap (BenchmarkProxyRSS_2000ExchangesOf1MiB): past the limit the
// collector runs more often, the proxy never fails for it.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(gcSoftLimit)
	}
}

// gcSoftLimit is the proxy's soft memory limit (see tuneGC).
const gcSoftLimit = 128 << 20
