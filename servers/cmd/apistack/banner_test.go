package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireShellTools skips the test when bash or curl is missing, except
// under CI (CI=true), where it fails: .ci/run installs them.
func requireShellTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "sha256sum", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI: %v", tool, err)
			}
			t.Skipf("%s not found: %v", tool, err)
		}
	}
}

// bannerCurl is one curl line of the demo banner: "  send:    curl …".
var bannerCurl = regexp.MustCompile(`(?m)^  ([a-z]+):\s+(curl .*)$`)

// pasted runs line in bash in dir as a user pasting it would, and returns
// what it wrote.
func pasted(t *testing.T, dir, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", line, out)
	return string(out)
}

// TestServeDemo_EveryBannerCurlLineWorksWhenPasted starts `serve --demo` as
// `make run` does (data in ./data) and runs every curl line of its banner in
// bash, from the same directory, judging each answer. A line added to the
// banner without a check here fails the test.
func TestServeDemo_EveryBannerCurlLineWorksWhenPasted(t *testing.T) {
	requireShellTools(t)
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "20ms")
	dir := t.TempDir()
	t.Chdir(dir)
	_, stdout, stop := startServe(t, "data")
	defer func() { require.NoError(t, stop()) }()
	rules := filepath.Join("data", demoRulesFile)
	assert.Contains(t, stdout.String(), "'@"+rules+"'", "the put line sends the document the demo wrote")
	_, err := os.Stat(rules)
	require.NoError(t, err, "the demo writes the document the put line names")

	jsonOf := func(t *testing.T, out string) map[string]any {
		t.Helper()
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		return v
	}
	checks := map[string]func(t *testing.T, line, out string){
		"token": func(t *testing.T, _, out string) { assert.NotEmpty(t, jsonOf(t, out)["bearer_token"]) },
		"groups": func(t *testing.T, _, out string) {
			assert.Contains(t, out, `"demo-admins"`)
		},
		"send": func(t *testing.T, _, out string) {
			data, _ := jsonOf(t, out)["data"].(map[string]any)
			assert.Equal(t, "queued", data["status"], out)
		},
		"list": func(t *testing.T, _, out string) {
			data, _ := jsonOf(t, out)["data"].([]any)
			assert.NotEmpty(t, data, "the fax just sent is listed: %s", out)
		},
		"webhooks": func(t *testing.T, line, out string) {
			// The fax sent above reaches delivered in a few steps, each
			// event delivered to the inbox this line reads.
			require.Eventually(t, func() bool {
				return strings.Contains(pasted(t, dir, line), "fax.delivered")
			}, 30*time.Second, 50*time.Millisecond, "the inbox receives the sent fax's events: %s", out)
		},
		"login": func(t *testing.T, _, out string) {
			tok, _ := jsonOf(t, out)["token"].(map[string]any)
			assert.NotEmpty(t, tok["accessToken"], out)
		},
		"menus": func(t *testing.T, _, out string) {
			var menus []map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &menus), out)
			assert.NotEmpty(t, menus)
		},
		"put": func(t *testing.T, _, out string) {
			assert.Empty(t, out, "200 with no body; an error is an XML <Error>")
		},
		"get": func(t *testing.T, _, out string) {
			assert.Contains(t, out, "<ID>expire-logs</ID>", "the rules put above come back")
			assert.Contains(t, out, "<ID>abort-uploads</ID>")
		},
		"teams": func(t *testing.T, _, out string) { assert.Equal(t, "demo", jsonOf(t, out)["name"]) },
	}
	lines := bannerCurl.FindAllStringSubmatch(stdout.String(), -1)
	var seen []string
	for _, m := range lines {
		label, line := m[1], m[2]
		seen = append(seen, label)
		check, ok := checks[label]
		if !assert.True(t, ok, "banner line %q has no check in this test", label) {
			continue
		}
		t.Run(label, func(t *testing.T) { check(t, line, pasted(t, dir, line)) })
	}
	assert.ElementsMatch(t, []string{"token", "groups", "send", "list", "webhooks", "login", "menus", "put", "get", "teams"}, seen,
		"every API's lines are printed:\n%s", stdout.String())
}
