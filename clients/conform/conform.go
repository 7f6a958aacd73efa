// Package conform is a black-box conformance suite for the apistack APIs
// (PAM, fax, storage, restaurant), derived from their specs and documented
// behaviour. It runs against any implementation (apistack itself, a team's own
// fake, a vendor sandbox) given a base URL and credentials, and reports one
// named result per check.
//
// Every request and response goes through protocol/contract, so an answer that
// breaks the spec fails the check that caused it, naming the operation and the
// rule. The storage checks read XML bodies with the decoder protocol/contract
// registers for them (internal/xmlbody); no server package is linked in.
//
//	creds, err := conform.ReadCredentials("data/demo-credentials.json")
//	report := conform.Run(ctx, conform.Config{API: conform.PAM, Credentials: creds})
//	report.WriteTable(os.Stdout)
//	os.Exit(report.ExitCode())
package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// API names an API the suite checks.
type API string

// The APIs with a suite.
const (
	PAM        API = "pam"
	Fax        API = "fax"
	Storage    API = "storage"
	Restaurant API = "restaurant"
)

// APIs lists every API with a suite, in the order they are documented.
var APIs = []API{PAM, Fax, Storage, Restaurant}

// ParseAPI returns the API named s.
func ParseAPI(s string) (API, error) {
	for _, a := range APIs {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown API %q (want one of pam, fax, storage, restaurant)", s)
}

// Credentials is the JSON document data/demo-credentials.json holds: one
// section per API, with the keys DESIGN.md section 5 fixes.
type Credentials struct {
	PAM        *PAMCredentials        `json:"pam,omitempty"`
	Fax        *FaxCredentials        `json:"fax,omitempty"`
	Storage    *StorageCredentials    `json:"storage,omitempty"`
	Restaurant *RestaurantCredentials `json:"restaurant,omitempty"`
}

// PAMCredentials is the pam section: a service user's key of a team whose
// service user may manage groups (pam_admin).
type PAMCredentials struct {
	BaseURL   string `json:"base_url"`
	Team      string `json:"team"`
	KeyID     string `json:"key_id"`
	KeySecret string `json:"key_secret"`
}

// FaxCredentials is the fax section: an API key, a fax application that can
// send (connection_id) from a number enabled on it, and the public key the
// webhooks are signed with (base64 Ed25519).
type FaxCredentials struct {
	BaseURL          string `json:"base_url"`
	APIKey           string `json:"api_key"`
	ConnectionID     string `json:"connection_id"`
	From             string `json:"from"`
	WebhookPublicKey string `json:"webhook_public_key"`
}

// StorageCredentials is the storage section: an access key, its region and
// two buckets of its account (bucket unversioned, versioned_bucket versioned).
type StorageCredentials struct {
	Endpoint        string `json:"endpoint"`
	Region          string `json:"region"`
	KeyID           string `json:"key_id"`
	Secret          string `json:"secret"`
	Bucket          string `json:"bucket"`
	VersionedBucket string `json:"versioned_bucket"`
}

// RestaurantCredentials is the restaurant section: an API client granted the
// restaurant restaurant_guid.
type RestaurantCredentials struct {
	BaseURL        string `json:"base_url"`
	ClientID       string `json:"client_id"`
	ClientSecret   string `json:"client_secret"`
	RestaurantGUID string `json:"restaurant_guid"`
}

// ReadCredentials reads a credentials file.
func ReadCredentials(path string) (Credentials, error) {
	var c Credentials
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("conform: read credentials: %w", err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("conform: credentials %s: %w", path, err)
	}
	return c, nil
}

// Config says what to check and how.
type Config struct {
	// API is the API to check.
	API API
	// Credentials holds at least the API's section.
	Credentials Credentials
	// BaseURL, when set, replaces the section's base URL (endpoint for storage).
	BaseURL string
	// Timeout bounds each check, including waits for asynchronous outcomes
	// (a fax reaching a final state, webhook deliveries); default 60s.
	Timeout time.Duration
	// Listen is the address of the local receiver the fax checks start for
	// webhooks and the document they send (default 127.0.0.1:0). The
	// implementation under test must reach it.
	Listen string
	// ReceiverURL is the base URL the implementation reaches the receiver at,
	// when it is not the listening address (a tunnel, a NAT); default
	// http://<the listening address>.
	ReceiverURL string
	// Transport sends the requests under the contract validation
	// (http.DefaultTransport when nil).
	Transport http.RoundTripper
}

// check is one named conformance check. run returns a short detail on
// success, or the failure.
type check struct {
	name string
	run  func(ctx context.Context) (string, error)
}

// Run runs every check of cfg.API, each on its own, and reports them all. A
// configuration error (no credentials for the API, a bad URL) is one failed
// check named "setup".
func Run(ctx context.Context, cfg Config) Report {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	checks, cleanup, err := suite(cfg)
	if err != nil {
		return Report{Results: []Result{{API: cfg.API, Check: "setup", Detail: oneLine(err.Error())}}}
	}
	defer cleanup()
	var r Report
	for _, c := range checks {
		r.Results = append(r.Results, runCheck(ctx, cfg, c))
	}
	return r
}

func suite(cfg Config) ([]check, func(), error) {
	switch cfg.API {
	case PAM:
		return pamSuite(cfg)
	case Fax:
		return faxSuite(cfg)
	case Storage:
		return storageSuite(cfg)
	case Restaurant:
		return restaurantSuite(cfg)
	}
	return nil, nil, fmt.Errorf("unknown API %q", cfg.API)
}

// runCheck runs c under the check timeout; a panic is the check's failure,
// not the end of the run.
func runCheck(ctx context.Context, cfg Config, c check) (res Result) {
	start := time.Now()
	res = Result{API: cfg.API, Check: c.name}
	defer func() {
		if p := recover(); p != nil {
			res.Passed, res.Detail = false, fmt.Sprintf("panic: %v: %s", p, oneLine(string(debug.Stack())))
		}
		res.Duration = time.Since(start)
	}()
	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	detail, err := c.run(cctx)
	if err != nil {
		res.Detail = oneLine(err.Error())
		return res
	}
	res.Passed, res.Detail = true, oneLine(detail)
	return res
}

// oneLine folds a multi-line message (kin-openapi's explanations) into one
// line for the table.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	lines = slices.DeleteFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "" })
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, " | ")
}
