package docblocks_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/docblocks"
)

// guides are README.md and docs/*.md, relative to the repository's root,
// but the benchmark records.
func guides(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(docblocks.Root(t), "docs", "*.md"))
	require.NoError(t, err)
	out := []string{"README.md"}
	for _, d := range docs {
		if !benchmarkRecords[filepath.Base(d)] {
			out = append(out, "docs/"+filepath.Base(d))
		}
	}
	return out
}

// benchmarkRecords are pages of measurements: their shell blocks are the
// benchmark runs that produced the figures, to reproduce them on a quiet
// machine, which a test cannot judge. They hold nothing else
// (TestGuides_BenchmarkRecordsHoldOnlyBenchmarkRuns).
var benchmarkRecords = map[string]bool{"scale-out-benchmarks.md": true}

// benchmarkRun is a line of a benchmark record's block: go test running
// benchmarks only, maybe with environment variables before it.
var benchmarkRun = regexp.MustCompile(`^([A-Z_]+=\S+ )*go test -run '\^\$' -bench \S+ .*\./\S+/$`)

func TestGuides_BenchmarkRecordsHoldOnlyBenchmarkRuns(t *testing.T) {
	for name := range benchmarkRecords {
		data, err := os.ReadFile(filepath.Join(docblocks.Root(t), "docs", name))
		require.NoError(t, err)
		blocks := 0
		for _, part := range strings.Split(string(data), "```sh\n")[1:] {
			blocks++
			body, _, ok := strings.Cut(part, "```")
			require.True(t, ok, "%s: a fence left open", name)
			for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
				if strings.HasPrefix(line, "#") {
					continue
				}
				assert.Regexp(t, benchmarkRun, line, "%s: a block of a benchmark record runs benchmarks only", name)
			}
		}
		assert.NotZero(t, blocks, name)
	}
}

// runners are the blocks a program other than a Go test runs, with the file
// that runs them and a string that file holds where it does.
var runners = map[string]struct{ file, holds string }{
	// The suite itself: CI runs it.
	"README.md make-test": {".ci/run", "\nmake test\n"},
	// podman and a built image: CI runs the image's checks after make image.
	"docs/container-image.md image-run": {"deploy/test-image.sh", "<!-- image-run -->"},
	// podman's Docker socket, the image and the Testcontainers module's
	// tests (a module of its own, so no Go test of this one runs them): CI
	// takes the three blocks from the guide and runs them in one shell.
	"docs/testcontainers.md tc-podman": {".ci/run", tcBlocks},
	"docs/testcontainers.md tc-image":  {".ci/run", tcBlocks},
	"docs/testcontainers.md tc-test":   {".ci/run", tcBlocks},
}

// tcBlocks is the line of .ci/run that reads the Testcontainers guide's
// blocks, in the order they run.
const tcBlocks = "for b in tc-podman tc-image tc-test; do doc_block docs/testcontainers.md \"$b\"; done"

// runCall is a Go test's call that runs or reads a named block.
var runCall = regexp.MustCompile(`docblocks\.(?:Run|RunModule|Block)\([^,]+,\s*"([^"]+)",\s*"([^"]+)"`)

// testedBlocks are the "file name" pairs the repository's Go tests run
// through docblocks, with the test file of each.
func testedBlocks(t *testing.T) map[string]string {
	t.Helper()
	root := docblocks.Root(t)
	found := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", ".tools", "gen", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range runCall.FindAllStringSubmatch(string(data), -1) {
			found[m[1]+" "+m[2]] = rel
		}
		return nil
	})
	require.NoError(t, err)
	return found
}

// fence is the opening of a fenced block and its language.
var fence = regexp.MustCompile("^```([a-z]*)$")

// Every shell block of the README and the guides is named, and every named
// block is run by a test (a Go test through docblocks, or one of runners):
// a command a reader pastes is one a test ran as written.
func TestGuides_EveryShellBlockIsNamedAndRun(t *testing.T) {
	root := docblocks.Root(t)
	tested := testedBlocks(t)
	seen := map[string]bool{}
	for _, file := range guides(t) {
		data, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		names := map[string]bool{}
		inFence := false
		for i, line := range lines {
			m := fence.FindStringSubmatch(line)
			switch {
			case inFence && line == "```":
				inFence = false
				continue
			case inFence || m == nil:
				continue
			}
			inFence = true
			if m[1] != "sh" && m[1] != "bash" && m[1] != "shell" && m[1] != "console" {
				continue // output, Go, YAML, JSON: shown, not run
			}
			var name string
			if i > 0 {
				if n, ok := strings.CutPrefix(lines[i-1], "<!-- "); ok {
					name = strings.TrimSuffix(n, " -->")
				}
			}
			if !assert.NotEmpty(t, name, "%s:%d: a ```%s block without <!-- name --> above it", file, i+1, m[1]) {
				continue
			}
			assert.Equal(t, "sh", m[1], "%s:%d: block %s: name shell blocks ```sh", file, i+1, name)
			assert.False(t, names[name], "%s: two blocks named %s", file, name)
			names[name] = true
			_, err := docblocks.Find(string(data), name)
			assert.NoError(t, err, "%s:%d", file, i+1)
			key := file + " " + name
			seen[key] = true
			if r, ok := runners[key]; ok {
				held, err := os.ReadFile(filepath.Join(root, r.file))
				require.NoError(t, err)
				assert.Contains(t, string(held), r.holds, "%s: block %s is said to be run by %s", file, name, r.file)
				continue
			}
			assert.Contains(t, tested, key, "%s:%d: block %s is run by no test (docblocks.Run or docblocks.Block with %q, %q)", file, i+1, name, file, name)
		}
		assert.False(t, inFence, "%s: a fence left open", file)
	}
	// And no test names a block that is gone.
	for key, test := range tested {
		assert.True(t, seen[key], "%s runs block %q, which no guide has", test, key)
	}
	for key := range runners {
		assert.True(t, seen[key], "runners lists %q, which no guide has", key)
	}
}

// link is a Markdown link to a relative path, an anchor, or both.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchor is the anchor GitHub gives a heading: lower case, spaces as
// hyphens, punctuation other than hyphens and underscores dropped.
func anchor(heading string) string {
	a := strings.ToLower(strings.TrimSpace(heading))
	a = regexp.MustCompile(`[^\w\- ]`).ReplaceAllString(a, "")
	return strings.ReplaceAll(a, " ", "-")
}

// anchors are the anchors of the headings of a Markdown file.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if !inFence && strings.HasPrefix(line, "#") {
			out[anchor(strings.TrimLeft(line, "#"))] = true
		}
	}
	return out
}

// Every relative link of the README and the guides names a file that exists
// and, with an anchor, a heading of that file: guides moved or renamed by one
// change and links written by another cannot drift apart.
func TestGuides_EveryLinkResolves(t *testing.T) {
	root := docblocks.Root(t)
	for _, file := range guides(t) {
		data, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := filepath.Join(root, file)
			if path != "" {
				dest = filepath.Join(filepath.Dir(dest), path)
			}
			text, err := os.ReadFile(dest)
			if !assert.NoError(t, err, "%s links to %s", file, target) || frag == "" {
				continue
			}
			assert.True(t, anchors(string(text))[frag], "%s links to %s: no such heading", file, target)
		}
	}
}
