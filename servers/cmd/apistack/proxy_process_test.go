package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy/harproxytest"
	"github.com/apistack/apistack/servers/internal/har"
	"github.com/apistack/apistack/servers/internal/har/hartest"
	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// proxyProcess is `apistack proxy` run as a process of its own.
type proxyProcess struct {
	*testkit.Process
	URL string
	out *safebuf.Buffer
}

func startProxyProcess(t testing.TB, bin string, args ...string) *proxyProcess {
	t.Helper()
	return startProxy(t, exec.Command(bin, append([]string{"proxy", "--addr", "127.0.0.1:0"}, args...)...))
}

// startProxy runs cmd, an `apistack proxy --addr 127.0.0.1:0 …` command
// line (perhaps behind a wrapper such as taskset), and waits until it
// listens.
func startProxy(t testing.TB, cmd *exec.Cmd) *proxyProcess {
	t.Helper()
	out, stderr := &safebuf.Buffer{}, &safebuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, stderr
	p := &proxyProcess{out: out}
	p.Process = testkit.Start(t, cmd, testkit.Stop{Signal: syscall.SIGTERM}, "apistack proxy", stderr.String)
	p.Await(t, 10*time.Second, 5*time.Millisecond, func() bool { return strings.Contains(out.String(), "live summary") },
		"apistack proxy did not start", stderr.String)
	p.URL = proxyAddr.FindStringSubmatch(out.String())[1]
	return p
}

// sendDeviatingCalls sends harproxytest.Calls through the proxy and waits
// until its live summary counts them all (each recorded).
func (p *proxyProcess) sendDeviatingCalls(t *testing.T) {
	t.Helper()
	for _, c := range harproxytest.Calls {
		ct := ""
		if c[2] != "" {
			ct = "application/json"
		}
		req, err := http.NewRequest(c[0], p.URL+c[1], strings.NewReader(c[2]))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer pat_upstream")
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(p.URL + harproxy.ReportPath)
		require.NoError(t, err)
		defer resp.Body.Close()
		var s harproxy.Summary
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&s))
		return s.Exchanges == len(harproxytest.Calls)
	}, 10*time.Second, 5*time.Millisecond)
}

// exitCode is the exit status of a finished command's error (0 for nil).
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	return exit.ExitCode()
}

// The real binary in front of a PAM service that deviates from the spec:
// ended by SIGTERM it leaves a whole HAR 1.2 file (and its --cpu-profile)
// and exits 1 with --fail-on-violation; killed by SIGKILL it leaves a file that conform
// --har and drift still read; drift against serve --demo names each field
// that drifts and exits 1.
func TestProxyProcess_SignalsLeaveAReadableHARAndDriftNamesEachField(t *testing.T) {
	dir := t.TempDir()
	bin := apistackBinary(t)
	upstream := httptest.NewServer(&harproxytest.DeviatingPAM{})
	t.Cleanup(upstream.Close)

	t.Run("SIGTERM", func(t *testing.T) {
		path, profile := filepath.Join(dir, "term.har"), filepath.Join(dir, "term.pprof")
		p := startProxyProcess(t, bin, "--api", "pam", "--upstream", upstream.URL, "--record", path, "--fail-on-violation",
			"--cpu-profile", profile)
		p.sendDeviatingCalls(t)
		require.NoError(t, p.Cmd.Process.Signal(syscall.SIGTERM))
		<-p.Exited()
		assert.Equal(t, 1, exitCode(t, p.Err()), "--fail-on-violation")
		assert.Contains(t, p.out.String(), "5 exchanges, 5 violations")
		assert.Regexp(t, `ListGroups\s+1\s+3`, p.out.String())
		log := hartest.ReadFile(t, path)
		assert.Len(t, log.Entries, len(harproxytest.Calls))
		data, err := os.ReadFile(profile)
		require.NoError(t, err)
		require.Greater(t, len(data), 2)
		assert.Equal(t, []byte{0x1f, 0x8b}, data[:2], "--cpu-profile leaves a pprof profile (gzipped) once the proxy has stopped")
	})

	t.Run("SIGKILL", func(t *testing.T) {
		path := filepath.Join(dir, "kill.har")
		p := startProxyProcess(t, bin, "--api", "pam", "--upstream", upstream.URL, "--record", path)
		p.sendDeviatingCalls(t)
		p.Kill()
		<-p.Exited()
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Error(t, hartest.Validate(data), "a killed recorder's file lacks its closing brackets")
		log, err := har.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, log.Truncated)
		assert.Len(t, log.Entries, len(harproxytest.Calls), "every exchange recorded before the kill is whole")

		conformOut, err := exec.Command(bin, "conform", "--api", "pam", "--har", path).Output()
		assert.Equal(t, 1, exitCode(t, err))
		assert.Contains(t, string(conformOut), "5 entries checked against the pam spec, 5 violations (the file ends inside its entries")
		for _, want := range []string{
			"ListGroups (GET /v1/teams/demo/groups?count=5): response /header/X-RateLimit-Limit",
			"ListGroups (GET /v1/teams/demo/groups?count=5): response /body/list/0/roles",
			"ListGroups (GET /v1/teams/demo/groups?count=5): response /body/list/0/colour: a member the spec does not declare",
			"GetGroup (GET /v1/teams/demo/groups/teapot): response /status: status 418",
			"CreateGroup (POST /v1/teams/demo/groups): request /body/name",
		} {
			assert.Contains(t, string(conformOut), want)
		}

		// drift against serve --demo.
		serveDir := t.TempDir()
		_, _, stop := startServe(t, filepath.Join(serveDir, "data"))
		t.Cleanup(func() { assert.NoError(t, stop()) })
		driftOut, err := exec.Command(bin, "drift", "--api", "pam", "--har", path,
			"--credentials", filepath.Join(serveDir, "data", "demo-credentials.json")).Output()
		assert.Equal(t, 1, exitCode(t, err), "%s", driftOut)
		got := string(driftOut)
		for _, want := range []string{
			"ListGroups: header X-RateLimit-Limit: present in the target only",
			"ListGroups: /list/*/roles: type: recorded string, target array",
			"ListGroups: /list/*/colour: missing from the target",
			"GetGroup: status: recorded 418, target 404",
			"CreateGroup: status: recorded 201, target 400",
			"5 entries replayed, 0 skipped, 5 differences",
		} {
			assert.Contains(t, got, want)
		}
		assert.NotContains(t, got, "IssueServiceToken:", "the key exchange keeps its shape")
		assert.Contains(t, got, "its recorder was killed")
	})
}
