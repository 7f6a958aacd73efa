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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
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

func TestConform_ApistackPassesEveryCheckOfEveryAPI(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "10ms")
	// The runner's document and webhook receiver are on loopback, which a
	// local stack's fax server reaches with no flag.
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	path := filepath.Join(dataDir, "demo-credentials.json")
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
	req, err := http.NewRequest(http.MethodGet, creds["fax"]["base_url"]+"/v2/fax_applications/"+creds["fax"]["connection_id"], nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+creds["fax"]["api_key"])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var app struct {
		Data struct {
			WebhookURL string `json:"webhook_url"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&app))
	assert.Equal(t, creds["admin"]["base_url"]+faxInboxPath, app.Data.WebhookURL)
}

func TestConform_TableOutputAndOverrides(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "10ms")
	// The runner's document and webhook receiver are on loopback, which a
	// local stack's fax server reaches with no flag.
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	path := filepath.Join(dataDir, "demo-credentials.json")

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
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Prism is not installed (%s): CI installs it with make prism", p)
		}
		t.Skipf("Prism is not installed (%s); run make prism or set APISTACK_PRISM", p)
	}
	return p
}

// startPrism runs `prism mock` on the API's spec on a free loopback port until
// the test ends, and returns its URL once it answers.
func startPrism(t *testing.T, prism, api string) string {
	t.Helper()
	base := closedPortURL(t)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	spec, err := filepath.Abs(filepath.Join("..", "..", "..", "specs", api, "openapi.yaml"))
	require.NoError(t, err)
	var logs safebuf.Buffer
	cmd := exec.Command(prism, "mock", spec, "-p", port, "-h", "127.0.0.1")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	// Its own process group, so the node process and anything it starts end together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	// exited is closed when Prism ends; waitErr is then its exit status.
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
	})
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := client.Get(base + "/")
		if err == nil {
			resp.Body.Close()
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("prism mock %s did not answer on %s: %s", api, base, logs.String())
		}
		select { // poll until Prism answers; its exit ends the wait early
		case <-exited:
			t.Fatalf("prism mock %s exited: %v: %s", api, waitErr, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
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
