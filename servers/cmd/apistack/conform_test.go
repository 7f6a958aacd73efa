package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// conformRow is one row of `apistack conform --format json`.
type conformRow struct {
	API    string `json:"api"`
	Check  string `json:"check"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
}

// runConform runs `apistack conform` and returns its JSON report and error.
func runConform(t *testing.T, args ...string) ([]conformRow, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"conform", "--format", "json"}, args...), &out, &errOut)
	var doc struct {
		Results []conformRow `json:"results"`
		Passed  int          `json:"passed"`
		Failed  int          `json:"failed"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), "stdout %q, stderr %q", out.String(), errOut.String())
	require.Equal(t, len(doc.Results), doc.Passed+doc.Failed)
	return doc.Results, err
}

// checkNames are the checks of each API that must exist.
var checkNames = map[string][]string{
	"pam": {"token-exchange", "authentication-required", "rate-limit-headers", "group-lifecycle", "pagination-walk",
		"error-not-found", "error-already-exists", "error-invalid-count"},
	"fax": {"authentication", "send-and-progress", "test-number-outcome", "list-pagination-meta", "validation-errors",
		"application-lifecycle", "webhook-signatures"},
	"storage": {"lifecycle-round-trip", "get-after-delete", "signature-wrong-secret", "signature-unknown-key",
		"signature-clock-skew", "signature-body-hash-mismatch", "malformed-xml"},
	"restaurant": {"login", "missing-restaurant-header", "pagination-walk", "tampered-page-token", "get-by-guid"},
}

func names(rows []conformRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Check)
	}
	return out
}

// serveForConform runs `apistack serve --demo` with a fast fax simulator
// until the test ends, and returns its credentials and the path of its
// credentials file. The runner's document and webhook receiver are on
// loopback, which a local stack's fax server reaches with no flag.
func serveForConform(t *testing.T) (creds map[string]map[string]string, path string) {
	t.Helper()
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "10ms")
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	t.Cleanup(func() { require.NoError(t, stop()) })
	return creds, filepath.Join(dataDir, "demo-credentials.json")
}

func TestConform_ApistackPassesEveryCheckOfEveryAPI(t *testing.T) {
	creds, path := serveForConform(t)
	for _, api := range []string{"pam", "fax", "storage", "restaurant"} {
		t.Run(api, func(t *testing.T) {
			require.Contains(t, creds, api)
			start := time.Now()
			rows, err := runConform(t, "--api", api, "--credentials", path, "--timeout", "30s")
			for _, r := range rows {
				assert.True(t, r.Passed, "%s/%s: %s", r.API, r.Check, r.Detail)
			}
			require.NoError(t, err)
			assert.Equal(t, checkNames[api], names(rows))
			t.Logf("%s: %d checks passed in %s", api, len(rows), time.Since(start).Round(time.Millisecond))
		})
	}

	// The demo fax application's webhooks go to the admin inbox again: the
	// webhook check restored the URL it borrowed.
	_, raw := faxCall(t, creds["fax"], http.MethodGet, "/v2/fax_applications/"+creds["fax"]["connection_id"], "", nil)
	var app struct {
		Data struct {
			WebhookURL string `json:"webhook_url"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &app))
	assert.Equal(t, creds["admin"]["base_url"]+faxInboxPath, app.Data.WebhookURL)
}

func TestConform_TableOutputAndOverrides(t *testing.T) {
	creds, path := serveForConform(t)

	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"conform", "--api", "restaurant", "--credentials", path}, &out, io.Discard))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 1+len(checkNames["restaurant"])+1, out.String())
	assert.Equal(t, []string{"CHECK", "RESULT", "TIME", "DETAIL"}, strings.Fields(lines[0]))
	assert.Equal(t, "restaurant/login", strings.Fields(lines[1])[0])
	assert.Equal(t, "PASS", strings.Fields(lines[1])[1])
	assert.Equal(t, "5 passed, 0 failed", lines[len(lines)-1])

	// --base-url wins over the credentials' URL: a closed port fails every check.
	closed := closedPortURL(t)
	rows, err := runConform(t, "--api", "pam", "--credentials", path, "--base-url", closed, "--timeout", "5s")
	var failed *checksFailed
	require.ErrorAs(t, err, &failed)
	assert.Equal(t, 1, exitStatus(err, io.Discard), "failed checks exit 1")
	for _, r := range rows {
		assert.False(t, r.Passed, r.Check)
		assert.Contains(t, r.Detail, strings.TrimPrefix(closed, "http://"), r.Check)
	}
	assert.NotContains(t, creds["pam"]["base_url"], closed)

	// An implementation that cannot reach the runner's receiver fails the
	// checks that need it, saying so; the others pass.
	rows, err = runConform(t, "--api", "fax", "--credentials", path, "--receiver-url", closed, "--timeout", "3s")
	require.ErrorAs(t, err, &failed)
	byName := map[string]conformRow{}
	for _, r := range rows {
		byName[r.Check] = r
	}
	assert.Contains(t, byName["send-and-progress"].Detail, "could not fetch the runner's document at "+closed)
	assert.Contains(t, byName["webhook-signatures"].Detail, "no webhook delivery reached the receiver at "+closed)
	for _, c := range []string{"authentication", "validation-errors", "application-lifecycle", "list-pagination-meta"} {
		assert.True(t, byName[c].Passed, "%s: %s", c, byName[c].Detail)
	}
}

// closedPortURL is the URL of a loopback port nothing listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

func TestConform_UsageErrorsExit2(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds.json")
	require.NoError(t, os.WriteFile(creds, []byte(`{"pam":{"base_url":"http://127.0.0.1:1","team":"t","key_id":"k","key_secret":"s"}}`), 0o600))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no API", []string{"conform", "--credentials", creds}, "--api"},
		{"an unknown API", []string{"conform", "--api", "admin", "--credentials", creds}, `unknown API "admin"`},
		{"an unknown format", []string{"conform", "--api", "pam", "--credentials", creds, "--format", "xml"}, "--format"},
		{"a missing credentials file", []string{"conform", "--api", "pam", "--credentials", creds + ".missing"}, "read credentials"},
		{"an unknown flag", []string{"conform", "--api", "pam", "--verbose"}, "verbose"},
		{"a stray argument", []string{"conform", "--api", "pam", "--credentials", creds, "extra"}, `unexpected argument "extra"`},
		{"a zero timeout", []string{"conform", "--api", "pam", "--credentials", creds, "--timeout", "0s"}, "--timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), tt.args, &out, &errOut)
			require.Error(t, err)
			assert.Equal(t, 2, exitStatus(err, io.Discard))
			assert.Contains(t, err.Error()+errOut.String(), tt.want)
			assert.Empty(t, out.String(), "no table on a usage error")
		})
	}

	var errOut bytes.Buffer
	err := run(context.Background(), []string{"conform", "-h"}, io.Discard, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, errOut.String(), "usage: apistack conform --api pam|fax|storage|restaurant")
	assert.Contains(t, errOut.String(), "-base-url")
}

func TestExitStatus(t *testing.T) {
	assert.Equal(t, 1, exitStatus(&checksFailed{summary: "1 passed, 1 failed"}, io.Discard))
	assert.Equal(t, 1, exitStatus(fmt.Errorf("wrapped: %w", &checksFailed{}), io.Discard))
	var stderr bytes.Buffer
	assert.Equal(t, 2, exitStatus(errors.New("no command given"), &stderr))
	assert.Equal(t, "apistack: no command given\n", stderr.String())
}

// prismPath finds the Prism CLI: $APISTACK_PRISM, else the repository's
// .tools (make prism).
func prismPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("APISTACK_PRISM"); p != "" {
		return p
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	p := filepath.Join(root, ".tools", "node_modules", ".bin", "prism")
	_, err = os.Stat(p)
	testkit.Need(t, "Prism (make prism installs it, or set APISTACK_PRISM)", err)
	return p
}

// startPrism runs `prism mock` on the API's spec on a free loopback port until
// the test ends, and returns its URL once it answers.
func startPrism(t *testing.T, prism, api string) string {
	t.Helper()
	return runPrism(t, prism, "prism mock "+api, "/", time.Second, "mock", specPath(t, api))
}

// runPrism runs prism with args on a free loopback port, in a process group
// of its own (the node process and anything it starts end together) until
// the test ends, and returns its URL once probe answers there.
func runPrism(t *testing.T, prism, what, probe string, timeout time.Duration, args ...string) string {
	t.Helper()
	base := closedPortURL(t)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	var logs safebuf.Buffer
	cmd := exec.Command(prism, append(args, "-p", port, "-h", "127.0.0.1")...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	p := testkit.Start(t, cmd, testkit.Stop{Group: true}, what+" log", logs.String)
	client := &http.Client{Timeout: timeout}
	p.Await(t, 90*time.Second, 50*time.Millisecond, func() bool { // poll until Prism answers
		resp, err := client.Get(base + probe)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	}, what+" did not answer on "+base, logs.String)
	return base
}

func TestConform_PrismMockFailsTheChecksAMockCannotPass(t *testing.T) {
	prism := prismPath(t)
	creds := filepath.Join(t.TempDir(), "creds.json")
	require.NoError(t, os.WriteFile(creds, []byte(`{
		"pam": {"base_url": "http://127.0.0.1:1", "team": "demo", "key_id": "key", "key_secret": "secret"},
		"fax": {"base_url": "http://127.0.0.1:1", "api_key": "key", "connection_id": "app", "from": "+13125550100",
		        "webhook_public_key": "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="},
		"storage": {"endpoint": "http://127.0.0.1:1", "region": "local-1", "key_id": "KEY", "secret": "secret",
		            "bucket": "demo-bucket", "versioned_bucket": "demo-versioned"},
		"restaurant": {"base_url": "http://127.0.0.1:1", "client_id": "id", "client_secret": "secret",
		               "restaurant_guid": "0f8d4b0e-1c7a-4c55-9f1e-6b2f3a9d8e71"}}`), 0o600))

	// What a stateless mock of the spec gets wrong, named by check.
	why := map[string]map[string]string{
		"pam": {
			"token-exchange":       "want \"demo\"",         // an example token, not the team's
			"group-lifecycle":      "not the group created", // no state
			"pagination-walk":      "Link header",           // no pagination
			"rate-limit-headers":   "allows nothing",        // no rate limit
			"error-not-found":      "want 404 resource_does_not_exist, got 200",
			"error-already-exists": "want 409 resource_already_exists, got 201",
		},
		"fax": {
			"authentication":        "want 401, got 200", // no key checked
			"send-and-progress":     "sent to +13125550800",
			"application-lifecycle": "for name conform-app-",
			"webhook-signatures":    "sent to +13125550800", // no fax, no webhooks
		},
		"storage": {
			// The mock answers the signed requests with examples that break the spec.
			"signature-wrong-secret":       "breaks the spec",
			"signature-body-hash-mismatch": "breaks the spec",
		},
		"restaurant": {
			"pagination-walk":     "returned twice", // the same example page forever
			"tampered-page-token": "want 400 INVALID_PAGE_TOKEN, got 200",
			"get-by-guid":         "want 404 NOT_FOUND, got 200",
		},
	}
	for _, api := range []string{"pam", "fax", "storage", "restaurant"} {
		t.Run(api, func(t *testing.T) {
			base := startPrism(t, prism, api)
			rows, err := runConform(t, "--api", api, "--credentials", creds, "--base-url", base, "--timeout", "5s")
			var failed *checksFailed
			require.ErrorAs(t, err, &failed, "conform exits non-zero against a mock")
			assert.Equal(t, 1, exitStatus(err, io.Discard))
			assert.Equal(t, checkNames[api], names(rows), "the same named checks as against apistack")
			for _, r := range rows {
				assert.False(t, r.Passed, "%s/%s passed against a mock: %s", r.API, r.Check, r.Detail)
				if want, ok := why[api][r.Check]; ok {
					assert.Contains(t, r.Detail, want, "%s/%s", r.API, r.Check)
				}
			}
			for check := range why[api] {
				assert.Contains(t, names(rows), check)
			}
			t.Logf("%s against prism: %d checks, all failed (%s)", api, len(rows), failed.summary)
		})
	}
}

// startPrismProxy runs `prism proxy` on the API's spec in front of upstream
// until the test ends, and returns its URL once it answers. It runs without
// --errors: with it Prism answers a request that breaks the spec itself (422)
// instead of forwarding it, and the conformance checks send such requests on
// purpose to see the implementation's own error. Prism validates every
// response either way and reports what it finds in the sl-violations header.
func startPrismProxy(t *testing.T, prism, spec, upstream string) string {
	t.Helper()
	api := filepath.Base(filepath.Dir(spec))
	return runPrism(t, prism, "prism proxy "+api, "/healthz", 2*time.Second, "proxy", spec, upstream, "--cors=false")
}

// prismViolation is one entry of Prism's sl-violations header.
type prismViolation struct {
	Location []string `json:"location"`
	Severity string   `json:"severity"`
	Code     any      `json:"code"`
	Message  string   `json:"message"`
}

// violationRecorder is a reverse proxy in front of Prism that keeps every
// violation Prism reports, by request.
type violationRecorder struct {
	mu        sync.Mutex
	responses []string // response violations: each fails the test
	requests  int      // request violations (the checks send bad requests on purpose)
	exchanges int
}

func (v *violationRecorder) record(resp *http.Response) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.exchanges++
	h := resp.Header.Get("sl-violations")
	if h == "" {
		return nil
	}
	where := fmt.Sprintf("%s %s -> %d", resp.Request.Method, resp.Request.URL.RequestURI(), resp.StatusCode)
	var found []prismViolation
	if err := json.Unmarshal([]byte(h), &found); err != nil {
		v.responses = append(v.responses, where+": unreadable sl-violations: "+h)
		return nil
	}
	for _, f := range found {
		if len(f.Location) > 0 && f.Location[0] == "response" {
			v.responses = append(v.responses, fmt.Sprintf("%s: %s %s: %s", where, f.Severity, strings.Join(f.Location, "."), f.Message))
		} else {
			v.requests++
		}
	}
	return nil
}

// startViolationRecorder serves a reverse proxy to target that records
// Prism's verdicts.
func startViolationRecorder(t *testing.T, target string) (string, *violationRecorder) {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	rec := &violationRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = rec.record
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL, rec
}

// TestConform_ThroughPrismValidatingProxy runs the conformance suite of PAM,
// fax and restaurant against apistack with Prism's validating proxy in
// between: a second, independent validator of every response the suite
// provokes (the suite's own is kin-openapi, through protocol/contract). Any
// response violation Prism reports fails the test, naming the request.
func TestConform_ThroughPrismValidatingProxy(t *testing.T) {
	prism := prismPath(t)
	t.Setenv("APISTACK_FAX_ALLOW_PRIVATE_DESTINATIONS", "true")
	creds, path := serveForConform(t)

	for _, api := range []string{"pam", "fax", "restaurant"} {
		t.Run(api, func(t *testing.T) {
			proxy := startPrismProxy(t, prism, specPath(t, api), creds[api]["base_url"])
			front, rec := startViolationRecorder(t, proxy)
			rows, err := runConform(t, "--api", api, "--credentials", path, "--base-url", front, "--timeout", "30s")
			for _, r := range rows {
				assert.True(t, r.Passed, "%s/%s through Prism: %s", r.API, r.Check, r.Detail)
			}
			require.NoError(t, err)
			assert.Equal(t, checkNames[api], names(rows))
			if api == "restaurant" {
				// The suite reads menu items only: read every other resource
				// too, a list page and one entity of each.
				readEveryRestaurantResource(t, front, creds["restaurant"])
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			assert.Empty(t, rec.responses, "Prism found responses that break specs/%s/openapi.yaml", api)
			assert.Positive(t, rec.exchanges)
			t.Logf("%s: %d checks passed through prism proxy; %d exchanges, %d response violations, %d request violations (sent on purpose)",
				api, len(rows), rec.exchanges, len(rec.responses), rec.requests)
		})
	}
}

// specPath is the absolute path of the API's spec.
func specPath(t *testing.T, api string) string {
	t.Helper()
	spec, err := filepath.Abs(filepath.Join("..", "..", "..", "specs", api, "openapi.yaml"))
	require.NoError(t, err)
	return spec
}

// readEveryRestaurantResource logs in at base and reads the first page of
// every restaurant list and the first entity of each by its GUID.
func readEveryRestaurantResource(t *testing.T, base string, creds map[string]string) {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(specPath(t, "restaurant"))
	require.NoError(t, err)
	body, err := json.Marshal(map[string]string{"clientId": creds["client_id"], "clientSecret": creds["client_secret"],
		"userAccessType": "PLATFORM_MACHINE_CLIENT"})
	require.NoError(t, err)
	resp, err := http.Post(base+"/authentication/v1/authentication/login", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var login struct {
		Token struct {
			AccessToken string `json:"accessToken"`
		} `json:"token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&login))
	resp.Body.Close()
	require.NotEmpty(t, login.Token.AccessToken)
	get := func(path string) []byte {
		// The restaurant allows 20 requests a second: a 429 is waited out
		// as its Retry-After says, as a client does.
		for attempt := 0; ; attempt++ {
			resp, data := testkit.Request{Method: http.MethodGet, URL: base + path, Token: login.Token.AccessToken,
				Header: []string{"Platform-Restaurant-External-ID", creds["restaurant_guid"]}}.Do(t)
			if resp.StatusCode == http.StatusTooManyRequests && attempt < 10 {
				secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
				require.NoError(t, err, "429 with Retry-After in seconds: %s", data)
				time.Sleep(time.Duration(max(secs, 1)) * time.Second)
				continue
			}
			require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", path, data)
			return data
		}
	}
	lists := 0
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		if item.Get == nil || !strings.HasPrefix(path, "/config/v2/") || strings.Contains(path, "{") {
			continue
		}
		lists++
		data := get(path)
		if doc.Paths.Value(path+"/{guid}") == nil {
			continue
		}
		var entities []struct {
			GUID string `json:"guid"`
		}
		require.NoError(t, json.Unmarshal(data, &entities), "GET %s", path)
		require.NotEmpty(t, entities, "the demo restaurant has every resource: %s", path)
		get(path + "/" + entities[0].GUID)
	}
	assert.Greater(t, lists, 20, "every list of the spec read")
}

// TestPrismProxy_CatchesTheNullableAllOf proves the proxied run fails on the
// construct it was made for: the restaurant spec as it was, with
// MenuGroup.parent written `nullable` beside `allOf`, makes Prism refuse
// every top-level group's null parent, which kin-openapi accepts.
func TestPrismProxy_CatchesTheNullableAllOf(t *testing.T) {
	prism := prismPath(t)
	data, err := os.ReadFile(specPath(t, "restaurant"))
	require.NoError(t, err)
	spec := string(data)
	start := strings.Index(spec, "            parent:\n              # An ExternalReference or null.")
	require.Positive(t, start, "MenuGroup.parent in the spec")
	end := strings.Index(spec[start:], "            items:\n")
	require.Positive(t, end)
	old := spec[:start] + `            parent:
              description: The enclosing group; null for a top-level group.
              type: object
              nullable: true
              allOf:
                - $ref: '#/components/schemas/ExternalReference'
` + spec[start+end:]
	dir := filepath.Join(t.TempDir(), "restaurant")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	oldSpec := filepath.Join(dir, "openapi.yaml")
	require.NoError(t, os.WriteFile(oldSpec, []byte(old), 0o600))

	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	proxy := startPrismProxy(t, prism, oldSpec, creds["restaurant"]["base_url"])
	front, rec := startViolationRecorder(t, proxy)
	readEveryRestaurantResource(t, front, creds["restaurant"])
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.responses, "Prism reads null as invalid for nullable beside allOf")
	for _, v := range rec.responses {
		assert.Contains(t, v, "/config/v2/menuGroups")
		assert.Contains(t, v, "parent")
	}
	t.Logf("%d response violations, e.g. %s", len(rec.responses), rec.responses[0])
}
