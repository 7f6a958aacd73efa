package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/docblocks"
	"github.com/apistack/apistack/servers/internal/har/hartest"
	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// The guides' blocks run against one `apistack serve --demo` process per
// test binary (started by the first test that needs it, stopped by
// TestMain), each block in a clean directory of its own that holds only
// bin/ (the binary) and data/ (the running stack's data directory), as the
// root of a clone after `make run` does.
var shared struct {
	buildOnce sync.Once
	bin       string // the built apistack
	buildErr  error

	demoOnce sync.Once
	dir      string // holds bin/apistack and data/
	cmd      *exec.Cmd
	out      *safebuf.Buffer
	creds    map[string]map[string]string
	demoErr  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cmd != nil {
		_ = shared.cmd.Process.Signal(os.Interrupt)
		_ = shared.cmd.Wait()
	}
	for _, dir := range []string{shared.dir, filepath.Dir(shared.bin)} {
		if dir != "" && dir != "." {
			_ = os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// apistackBinary builds apistack once per test binary and returns its path.
func apistackBinary(t testing.TB) string {
	t.Helper()
	shared.buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "apistack-bin-")
		if err != nil {
			shared.buildErr = err
			return
		}
		shared.bin = filepath.Join(dir, "apistack")
		out, err := exec.Command("go", "build", "-o", shared.bin, ".").CombinedOutput()
		if err != nil {
			shared.buildErr = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	require.NoError(t, shared.buildErr)
	return shared.bin
}

// sharedDemo starts the shared `apistack serve --demo` once and returns its
// directory (bin/apistack, data/) and credentials.
func sharedDemo(t *testing.T) (string, map[string]map[string]string) {
	t.Helper()
	bin := apistackBinary(t)
	shared.demoOnce.Do(func() { shared.demoErr = startSharedDemo(bin) })
	require.NoError(t, shared.demoErr)
	return shared.dir, shared.creds
}

func startSharedDemo(bin string) error {
	dir, err := os.MkdirTemp("", "apistack-docs-")
	if err != nil {
		return err
	}
	shared.dir = dir
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(bin, filepath.Join(dir, "bin", "apistack")); err != nil {
		return err
	}
	args := append([]string{"serve", "--demo"}, loopbackServeArgs("data")...)
	shared.out = &safebuf.Buffer{}
	shared.cmd = exec.Command(filepath.Join(dir, "bin", "apistack"), args...)
	shared.cmd.Dir = dir
	shared.cmd.Stdout, shared.cmd.Stderr = shared.out, shared.out
	if err := shared.cmd.Start(); err != nil {
		shared.cmd = nil
		return err
	}
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(shared.out.String(), "console "); {
		if time.Now().After(deadline) {
			return fmt.Errorf("apistack serve --demo did not start: %s", shared.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	data, err := os.ReadFile(filepath.Join(dir, "data", "demo-credentials.json"))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, &shared.creds)
}

// docsDir returns a clean directory for one block, holding bin/ and data/ of
// the shared demo, and the demo's credentials; tools are the programs the
// block runs (a missing one skips the test, outside CI).
func docsDir(t *testing.T, tools ...string) (string, map[string]map[string]string) {
	t.Helper()
	testkit.Tools(t, tools...)
	demo, creds := sharedDemo(t)
	dir := t.TempDir()
	for _, name := range []string{"bin", "data"} {
		require.NoError(t, os.Symlink(filepath.Join(demo, name), filepath.Join(dir, name)))
	}
	return dir, creds
}

// TestDocs_SandboxCLIExample runs the sandboxes guide's shell commands:
// create with the creator token, the rest with the sandbox's own.
func TestDocs_SandboxCLIExample(t *testing.T) {
	dir, _ := docsDir(t, "bash", "jq")
	out := docblocks.Run(t, "docs/sandboxes.md", "sandbox-cli-example", dir)
	// A frozen clock's offset is from wall time, which went on meanwhile.
	assert.Regexp(t, `"offset": "(9m5\d|10m0)`, out, "the advance moved the clock ten minutes")
	assert.Contains(t, out, `"mode": "frozen"`)
}

// TestDocs_FirstCalls runs the getting-started guide's first calls.
func TestDocs_FirstCalls(t *testing.T) {
	dir, _ := docsDir(t, "bash", "curl")
	out := docblocks.Run(t, "docs/getting-started.md", "first-calls", dir)
	assert.Contains(t, out, `"data":`, "the fax list answered")
	assert.Contains(t, out, `"name": "demo"`, "the admin CLI read the demo team")
}

// TestDocs_AdminCLI runs the server guide's admin command line.
func TestDocs_AdminCLI(t *testing.T) {
	dir, _ := docsDir(t, "bash")
	out := docblocks.Run(t, "docs/server.md", "admin-cli", dir)
	assert.Contains(t, out, `"name": "demo"`)
	assert.Contains(t, out, "demo-bucket")
}

// TestDocs_ConformPAM runs the conformance guide's line against the demo.
func TestDocs_ConformPAM(t *testing.T) {
	dir, _ := docsDir(t, "bash")
	out := docblocks.Run(t, "docs/conformance.md", "conform-pam", dir)
	assert.Regexp(t, `pam/token-exchange +PASS`, out)
	assert.Contains(t, out, " passed, 0 failed")
}

// TestDocs_MakeRun runs the README's `make run` as written from the root of
// the clone, its data directory and ports moved by their APISTACK_*
// variables (the clone's own data/ and the default ports stay untouched),
// until the banner is printed.
func TestDocs_MakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bin/apistack through make")
	}
	testkit.Tools(t, "bash", "make")
	root := docblocks.Root(t)
	env := []string{"APISTACK_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}
	for _, api := range []string{"PAM", "FAX", "STORAGE", "RESTAURANT", "ADMIN"} {
		env = append(env, "APISTACK_"+api+"_ADDR=127.0.0.1:0")
	}
	out := &safebuf.Buffer{}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", docblocks.Block(t, "README.md", "make-run"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	proc := testkit.Start(t, cmd, testkit.Stop{Signal: os.Interrupt, Group: true, Grace: 30 * time.Second}, "make run", out.String)
	proc.Await(t, 5*time.Minute, 50*time.Millisecond, func() bool { return strings.Contains(out.String(), "console ") },
		"make run printed no banner", out.String)
	assert.Contains(t, out.String(), "apistack is running with demo tenants")
	assert.Regexp(t, `(?m)^  token:   curl -s -X POST http://127\.0\.0\.1:\d+/v1/teams/demo/service_token`, out.String())
}

// TestServeDemo_SecondStartBannerLinesWorkWhenPasted starts the built
// binary twice on one data directory, as a second `make run` does, and runs
// every curl line of the second start's banner in bash: each secret is read
// from demo-credentials.json by the binary's absolute path.
func TestServeDemo_SecondStartBannerLinesWorkWhenPasted(t *testing.T) {
	testkit.Tools(t, "bash", "curl", "sha256sum", "sed")
	bin := apistackBinary(t)
	dir := t.TempDir()
	start := func() (*testkit.Process, *safebuf.Buffer) {
		args := append([]string{"serve", "--demo"}, loopbackServeArgs("data")...)
		out := &safebuf.Buffer{}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "APISTACK_FAX_STEP_INTERVAL=20ms")
		cmd.Stdout, cmd.Stderr = out, out
		p := testkit.Start(t, cmd, testkit.Stop{Signal: os.Interrupt, Grace: 30 * time.Second}, "apistack serve", out.String)
		p.Await(t, 60*time.Second, 20*time.Millisecond, func() bool { return strings.Contains(out.String(), "console ") },
			"apistack serve printed no banner", out.String)
		return p, out
	}
	first, _ := start()
	first.End()
	require.NoError(t, first.Err(), "the first start stops on SIGINT")

	_, second := start()
	banner := second.String()
	for _, s := range fileSecrets(t, filepath.Join(dir, "data")) {
		assert.NotContains(t, banner, s.value, "the second start prints no %s", s.path)
	}
	assert.Contains(t, banner, bin+" creds --data-dir "+filepath.Join(dir, "data")+" pam.key_secret",
		"the lines read the secrets with the binary and the data directory by their absolute paths")
	runBannerLines(t, dir, banner)
}

// TestCredsCommand prints one value of the credentials file, and names what
// exists when asked for what does not.
func TestCredsCommand(t *testing.T) {
	dataDir := t.TempDir()
	creds := map[string]map[string]string{"pam": {"key_id": "k1", "key_secret": "s3cret"}}
	data, err := json.Marshal(creds)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dataDir, "demo-credentials.json"), data, 0o600))
	for _, tc := range []struct {
		args      []string
		want, err string
	}{
		{args: []string{"--data-dir", dataDir, "pam.key_secret"}, want: "s3cret\n"},
		{args: []string{"--data-dir", dataDir, "pam.nope"}, err: `no key "nope" in section pam (it has key_id, key_secret)`},
		{args: []string{"--data-dir", dataDir, "fax.api_key"}, err: `no section "fax" (it has pam)`},
		{args: []string{"--data-dir", dataDir, "pam"}, err: "is not SECTION.KEY"},
		{args: []string{"--data-dir", dataDir}, err: "usage: apistack creds"},
		{args: []string{"--data-dir", filepath.Join(dataDir, "missing"), "pam.key_id"}, err: "run `apistack serve --demo` first"},
	} {
		t.Run(strings.Join(tc.args[2:], " "), func(t *testing.T) {
			var out, errOut strings.Builder
			err := run(context.Background(), append([]string{"creds"}, tc.args...), &out, &errOut)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Empty(t, out.String())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, out.String())
		})
	}
	t.Setenv("APISTACK_DATA_DIR", dataDir)
	var out strings.Builder
	require.NoError(t, run(context.Background(), []string{"creds", "pam.key_id"}, &out, &strings.Builder{}))
	assert.Equal(t, "k1\n", out.String(), "APISTACK_DATA_DIR names the directory")
}

// TestFixturesGuide runs every sh block of docs/fixtures.md, as written and
// in order, against `apistack serve --demo` with the binary built from here
// on PATH, and checks what they made.
func TestFixturesGuide(t *testing.T) {
	testkit.Tools(t, "bash", "jq")
	dir := t.TempDir()
	_, _, stop := startServe(t, filepath.Join(dir, "data"))
	t.Cleanup(func() { assert.NoError(t, stop()) })
	path := "PATH=" + filepath.Dir(apistackBinary(t)) + string(os.PathListSeparator) + os.Getenv("PATH")
	// Each call names its file and block literally: that is how the guides'
	// lint (internal/docblocks) finds the blocks a test runs.
	docblocks.Run(t, "docs/fixtures.md", "fixtures-write", dir, path)
	out := docblocks.Run(t, "docs/fixtures.md", "fixtures-create", dir, path)
	var sb struct {
		ID                 string `json:"id"`
		FixtureCredentials struct {
			PAM struct {
				Keys map[string]struct {
					KeyID string `json:"key_id"`
				} `json:"keys"`
			} `json:"pam"`
			Fax struct {
				Numbers map[string]string `json:"numbers"`
			} `json:"fax"`
			Storage struct {
				Buckets map[string]string `json:"buckets"`
			} `json:"storage"`
		} `json:"fixture_credentials"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "sandbox.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sb), string(data))
	lines := strings.Fields(out)
	require.Len(t, lines, 3, out)
	assert.Equal(t, sb.FixtureCredentials.PAM.Keys["ci"].KeyID, lines[0])
	assert.Equal(t, sb.FixtureCredentials.Fax.Numbers["main"], lines[1])
	assert.Equal(t, sb.ID+"-invoices", lines[2])

	assert.Contains(t, docblocks.Run(t, "docs/fixtures.md", "fixtures-refused", dir, path), "/fixture/pam/groups/0/roles/0")

	listed := strings.Fields(docblocks.Run(t, "docs/fixtures.md", "fixtures-fork", dir, path))
	var snap struct {
		ID string `json:"id"`
	}
	data, err = os.ReadFile(filepath.Join(dir, "snapshot.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &snap))
	assert.Equal(t, []string{snap.ID}, listed)
	for _, fork := range []string{"fork-1.json", "fork-2.json"} {
		data, err := os.ReadFile(filepath.Join(dir, fork))
		require.NoError(t, err)
		assert.Contains(t, string(data), `"invoices"`, "%s holds the fixture's bucket", fork)
	}
}

// The guide docs/stand-ins.md runs as written, its three workflows one
// after the other beside `apistack serve --demo`: record through the
// proxy, check the recording offline, replay it against the stand-in.
func TestStandInsGuide_RecordCheckAndDiffRun(t *testing.T) {
	testkit.Tools(t, "bash", "curl", "jq")
	dir := t.TempDir()
	bin := apistackBinary(t)
	_, _, stop := startServe(t, filepath.Join(dir, "data"))
	t.Cleanup(func() { assert.NoError(t, stop()) })
	env := []string{"PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH"), "PROXY_ADDR=" + freeAddrs(t, 1)[0]}

	out := docblocks.Run(t, "docs/stand-ins.md", "standins-record", dir, env...)
	assert.Contains(t, out, `"exchanges":4,"violations":0`)
	assert.Contains(t, out, "4 exchanges, 0 violations")
	var ops []string
	for _, e := range hartest.ReadFile(t, filepath.Join(dir, "pam.har")).Entries {
		ops = append(ops, e.Operation)
	}
	assert.ElementsMatch(t, []string{"IssueServiceToken", "ListGroups", "CreateGroup", "DeleteGroup"}, ops)

	out = docblocks.Run(t, "docs/stand-ins.md", "standins-conform", dir, env...)
	assert.Contains(t, out, "4 entries checked against the pam spec, 0 violations")

	out = docblocks.Run(t, "docs/stand-ins.md", "standins-drift", dir, env...)
	assert.Contains(t, out, "4 entries replayed, 0 skipped, 0 differences")
	assert.Equal(t, 1, strings.Count(out, "\n"), "the summary alone: %s", out)
}
