package main

import (
	"bytes"
	"encoding/json"
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
	"syscall"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
)

// startPrismProxy runs `prism proxy` on the API's spec in front of upstream
// until the test ends, and returns its URL once it answers. It runs without
// --errors: with it Prism answers a request that breaks the spec itself (422)
// instead of forwarding it, and the conformance checks send such requests on
// purpose to see the implementation's own error. Prism validates every
// response either way and reports what it finds in the sl-violations header.
func startPrismProxy(t *testing.T, prism, spec, upstream string) string {
	t.Helper()
	api := filepath.Base(filepath.Dir(spec))
	base := closedPortURL(t)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	var logs safebuf.Buffer
	cmd := exec.Command(prism, "proxy", spec, upstream, "-p", port, "-h", "127.0.0.1", "--cors=false")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("prism proxy %s log:\n%s", api, logs.String())
		}
	})
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("prism proxy %s did not answer on %s: %s", api, base, logs.String())
		}
		select { // poll until Prism answers; its exit ends the wait early
		case <-exited:
			t.Fatalf("prism proxy %s exited: %v: %s", api, waitErr, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
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
// provokes (the suite's own is kin-openapi, through clients/contract). Any
// response violation Prism reports fails the test, naming the request.
func TestConform_ThroughPrismValidatingProxy(t *testing.T) {
	prism := prismPath(t)
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "10ms")
	t.Setenv("APISTACK_FAX_ALLOW_PRIVATE_DESTINATIONS", "true")
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	path := filepath.Join(dataDir, "demo-credentials.json")

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
			req, err := http.NewRequest(http.MethodGet, base+path, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+login.Token.AccessToken)
			req.Header.Set("Platform-Restaurant-External-ID", creds["restaurant_guid"])
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
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
