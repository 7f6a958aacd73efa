package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitRepo is a throwaway repository whose specs/w/openapi.yaml starts as
// the base fixture, committed.
func gitRepo(t *testing.T) (string, func(args ...string)) {
	t.Helper()
	dir := t.TempDir()
	g := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	g("init", "-q", "-b", "main")
	writeSpec(t, dir, "specs/w/openapi.yaml", readFixture(t, "base.yaml"))
	g("add", ".")
	g("commit", "-q", "-m", "base")
	return dir, g
}

func writeSpec(t *testing.T, root, p, text string) {
	t.Helper()
	file := filepath.Join(root, filepath.FromSlash(p))
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
}

func TestCheck_Command(t *testing.T) {
	t.Setenv("CI", "false") // a version left unbumped is a warning here
	dir, _ := gitRepo(t)
	ctx := context.Background()

	// Unchanged: passes.
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &out, &out))
	assert.Contains(t, out.String(), "specs/w/openapi.yaml (1.4.0 -> 1.4.0): ok, 0 breaking")

	// Breaking changes under a minor bump: exit status 1, each named.
	writeSpec(t, dir, "specs/w/openapi.yaml", readFixture(t, "breaking.yaml"))
	out.Reset()
	err := run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &out, &out)
	require.ErrorIs(t, err, errBreaking)
	assert.Contains(t, err.Error(), "specs/w/openapi.yaml")
	for _, want := range []string{
		"specs/w/openapi.yaml (1.4.0 -> 1.5.0): FAIL",
		"breaking DELETE /widgets/{id} (DeleteWidget): API removed without deprecation [api-removed-without-deprecation]",
		"breaking GET /widgets (ListWidgets):",
		"[request-parameter-became-required]",
		"breaking POST /widgets (CreateWidget):",
		"[new-required-request-property]",
		"[request-property-enum-value-removed]",
		"[response-required-property-removed]",
		"[response-property-type-changed]",
		"breaks its consumers without a new major info.version (1.4.0 -> 1.5.0)",
	} {
		assert.Contains(t, out.String(), want)
	}

	// The same under a new major version: passes, still listed.
	writeSpec(t, dir, "specs/w/openapi.yaml", strings.Replace(readFixture(t, "breaking.yaml"), "version: 1.5.0", "version: 2.0.0", 1))
	out.Reset()
	require.NoError(t, run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &out, &out))
	assert.Contains(t, out.String(), "(1.4.0 -> 2.0.0): ok (new major version)")
	assert.Contains(t, out.String(), "[api-removed-without-deprecation]")

	// Additions pass, but ask for the minor version they need; a new spec
	// passes; a removed spec fails.
	writeSpec(t, dir, "specs/w/openapi.yaml", readFixture(t, "additions.yaml"))
	writeSpec(t, dir, "specs/v/webhooks.yaml", readFixture(t, "base.yaml"))
	out.Reset()
	require.NoError(t, run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &out, &out), out.String())
	assert.Contains(t, out.String(), "specs/v/webhooks.yaml (new at 1.4.0): ok")
	assert.Contains(t, out.String(), "specs/w/openapi.yaml (1.4.0 -> 1.4.0): VERSION NOT BUMPED")
	assert.Contains(t, out.String(), "but info.version is still 1.4.0: write 1.5.0")
	assert.Contains(t, out.String(), "warning: the interface changed without a new info.version (specs/w/openapi.yaml: write 1.5.0)")
	writeSpec(t, dir, "specs/w/openapi.yaml", strings.Replace(readFixture(t, "additions.yaml"), "version: 1.4.0", "version: 1.5.0", 1))
	out.Reset()
	require.NoError(t, run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &out, &out), out.String())
	assert.Contains(t, out.String(), "specs/w/openapi.yaml (1.4.0 -> 1.5.0): ok, 0 breaking")
	assert.NotContains(t, out.String(), "warning:")
	writeSpec(t, dir, "specs/w/openapi.yaml", readFixture(t, "additions.yaml"))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "specs", "w")))
	out.Reset()
	err = run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &out, &out)
	require.ErrorIs(t, err, errBreaking)
	assert.Contains(t, out.String(), "specs/w/openapi.yaml (removed (was 1.4.0)): FAIL")
}

func TestCheck_AdditionsWithoutANewVersionFailUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	dir, _ := gitRepo(t)
	ctx := context.Background()
	writeSpec(t, dir, "specs/w/openapi.yaml", readFixture(t, "additions.yaml"))
	var out bytes.Buffer
	err := run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &out, &out)
	require.ErrorIs(t, err, errVersionNotBumped)
	assert.Contains(t, err.Error(), "specs/w/openapi.yaml: write 1.5.0")

	// Descriptions only: nothing to bump.
	writeSpec(t, dir, "specs/w/openapi.yaml", strings.Replace(readFixture(t, "base.yaml"), "description: the widgets", "description: every widget", 1))
	out.Reset()
	require.NoError(t, run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &out, &out), out.String())
}

func TestChangelog_CheckSaysWhichVersionToWrite(t *testing.T) {
	dir, _ := gitRepo(t)
	ctx := context.Background()
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"changelog", "--root", dir}, &out, &out))
	writeSpec(t, dir, "specs/w/openapi.yaml", readFixture(t, "additions.yaml"))
	out.Reset()
	err := run(ctx, []string{"changelog", "--root", dir, "--check"}, &out, &out)
	require.Error(t, err)
	assert.Contains(t, out.String(), "specs/w/openapi.yaml: the interface changed since the last commit but info.version is still 1.4.0: write 1.5.0 in info.version")

	writeSpec(t, dir, "specs/w/openapi.yaml", strings.Replace(readFixture(t, "additions.yaml"), "version: 1.4.0", "version: 1.5.0", 1))
	out.Reset()
	require.NoError(t, run(ctx, []string{"changelog", "--root", dir}, &out, &out))
	require.NoError(t, run(ctx, []string{"changelog", "--root", dir, "--check"}, &out, &out), out.String())
}

func TestCheck_UsageErrors(t *testing.T) {
	dir, _ := gitRepo(t)
	ctx := context.Background()
	for _, args := range [][]string{
		nil,
		{"check"},
		{"check", "--base", "HEAD", "extra"},
		{"nonsense"},
		{"changelog", "extra"},
	} {
		err := run(ctx, append(args, "--root", dir), &bytes.Buffer{}, &bytes.Buffer{})
		if len(args) == 0 {
			err = run(ctx, nil, &bytes.Buffer{}, &bytes.Buffer{})
		}
		require.ErrorIs(t, err, errUsage, "%v", args)
	}
	err := run(ctx, []string{"check", "--base", "no-such-rev", "--root", dir}, &bytes.Buffer{}, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"no-such-rev" is not a commit`)

	// A spec that does not load is an error, not a pass.
	writeSpec(t, dir, "specs/w/openapi.yaml", "openapi: 3.0.3\ninfo: [\n")
	err = run(ctx, []string{"check", "--base", "HEAD", "--root", dir}, &bytes.Buffer{}, &bytes.Buffer{})
	require.Error(t, err)
	assert.NotErrorIs(t, err, errBreaking)
	assert.Contains(t, err.Error(), "load specs/w/openapi.yaml")
}

func TestChangelog_OneEntryPerVersion(t *testing.T) {
	dir, g := gitRepo(t)
	ctx := context.Background()

	// 1.4.0 edited twice (one entry), then 1.5.0 with additions, then
	// 2.0.0 breaking, and a documentation-only 2.0.1 in the work tree.
	writeSpec(t, dir, "specs/w/openapi.yaml", strings.Replace(readFixture(t, "base.yaml"), "description: the widgets", "description: every widget", 1))
	g("commit", "-q", "-am", "docs")
	writeSpec(t, dir, "specs/w/openapi.yaml", strings.Replace(readFixture(t, "additions.yaml"), "version: 1.4.0", "version: 1.5.0", 1))
	g("commit", "-q", "-am", "1.5.0")
	major := strings.Replace(readFixture(t, "breaking.yaml"), "version: 1.5.0", "version: 2.0.0", 1)
	writeSpec(t, dir, "specs/w/openapi.yaml", major)
	g("commit", "-q", "-am", "2.0.0")
	writeSpec(t, dir, "specs/w/openapi.yaml", strings.Replace(strings.Replace(major, "version: 2.0.0", "version: 2.0.1", 1), "description: deleted", "description: gone", 1))

	var out bytes.Buffer
	err := run(ctx, []string{"changelog", "--root", dir, "--check"}, &out, &out)
	require.ErrorIs(t, err, errStaleChangelog, "no changelog yet")
	require.NoError(t, run(ctx, []string{"changelog", "--root", dir}, &out, &out))
	assert.Contains(t, out.String(), "wrote specs/w/CHANGELOG.md")
	data, err := os.ReadFile(filepath.Join(dir, "specs", "w", "CHANGELOG.md"))
	require.NoError(t, err)
	text := string(data)
	assert.Equal(t, 1, strings.Count(text, "## 1.4.0"))
	headings := regexpHeadings(text)
	assert.Equal(t, []string{"2.0.1", "2.0.0", "1.5.0", "1.4.0"}, headings, text)
	assert.Contains(t, section(text, "2.0.1"), "No change to the interface since 2.0.0")
	assert.Contains(t, section(text, "2.0.0"), "Breaking changes:\n\n- `GET /widgets (ListWidgets)`: the `query` request parameter `count` became required\n")
	assert.Contains(t, section(text, "2.0.0"), "- `DELETE /widgets/{id} (DeleteWidget)`: API removed without deprecation\n")
	assert.Contains(t, section(text, "1.5.0"), "`PUT /widgets/{id} (ReplaceWidget)`: endpoint added")
	assert.NotContains(t, section(text, "1.5.0"), "Breaking changes")
	assert.Contains(t, section(text, "1.4.0"), "The first version in this history.")

	// Written once, it is current; a further edit makes it stale.
	require.NoError(t, run(ctx, []string{"changelog", "--root", dir, "--check"}, &out, &out))
	writeSpec(t, dir, "specs/w/openapi.yaml", major)
	require.ErrorIs(t, run(ctx, []string{"changelog", "--root", dir, "--check"}, &out, &out), errStaleChangelog)
}

// regexpHeadings lists the "## " headings in order.
func regexpHeadings(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "## "); ok {
			out = append(out, v)
		}
	}
	return out
}

// section is the text under one "## " heading.
func section(text, version string) string {
	_, after, ok := strings.Cut(text, "## "+version+"\n")
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, "\n## ")
	return before
}

// TestMakeTargets_InThisRepository runs the specs guide's commands on this
// repository: make breaking against HEAD (the work tree may hold edits, but
// none of this repository's own history breaks a consumer unnoticed) and the
// pull-request form against the merge base with origin/main when the clone
// has one, and make changelog-check.
func TestMakeTargets_InThisRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command through make")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		t.Skipf("not in the repository: %v", err)
	}
	make := func(t *testing.T, script string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", script, out)
		return string(out)
	}
	out := make(t, "make -s breaking BASE=HEAD")
	assert.Contains(t, out, "specs/pam/openapi.yaml (")
	assert.Contains(t, out, "specs/fax/webhooks.yaml (")
	if exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", "origin/main").Run() == nil {
		out = make(t, "make -s breaking BASE=$(git merge-base origin/main HEAD)")
		assert.Contains(t, out, "specs/restaurant/openapi.yaml (")
	}
	make(t, "make -s changelog-check")
}
