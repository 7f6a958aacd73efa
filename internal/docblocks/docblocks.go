// Package docblocks reads the shell blocks of the repository's Markdown
// guides (README.md and docs/*.md) so that tests can run them exactly as a
// reader pastes them.
//
// A runnable block is a ```sh fence wrapped in a pair of HTML comments that
// name it, which Markdown renders as nothing:
//
//	<!-- name -->
//	```sh
//	...
//	```
//	<!-- /name -->
package docblocks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Root returns the repository's root: the nearest directory above the
// working directory that holds the apistack module's go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("docblocks: %v", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/apistack/apistack\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("docblocks: no apistack go.mod above the working directory")
		}
		dir = parent
	}
}

// Find returns the body of the sh block named name in the Markdown text doc.
func Find(doc, name string) (string, error) {
	return FindCode(doc, name, "sh")
}

// FindCode returns the body of the block of language lang (the word after
// its opening fence, such as go) named name in the Markdown text doc.
func FindCode(doc, name, lang string) (string, error) {
	_, rest, ok := strings.Cut(doc, "<!-- "+name+" -->\n```"+lang+"\n")
	if !ok {
		return "", fmt.Errorf("no %s block named %q (<!-- %s --> followed by a ```%s fence)", lang, name, name, lang)
	}
	body, _, ok := strings.Cut(rest, "```\n<!-- /"+name+" -->")
	if !ok {
		return "", fmt.Errorf("the sh block %q is not closed by ``` and <!-- /%s -->", name, name)
	}
	return body, nil
}

// Block returns the body of the sh block named name in file, a path relative
// to the repository's root (such as "docs/sandboxes.md").
func Block(t testing.TB, file, name string) string {
	t.Helper()
	return Code(t, file, name, "sh")
}

// Code returns the body of the block of language lang named name in file, a
// path relative to the repository's root.
func Code(t testing.TB, file, name, lang string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Root(t), file))
	if err != nil {
		t.Fatalf("docblocks: %v", err)
	}
	body, err := FindCode(string(data), name, lang)
	if err != nil {
		t.Fatalf("docblocks: %s: %v", file, err)
	}
	return body
}

// Run runs the sh block named name of file, as written, with bash -euo
// pipefail in dir, the environment being the test's plus env ("KEY=value"),
// and returns its combined output. A block that exits non-zero fails t,
// showing what it printed.
func Run(t testing.TB, file, name, dir string, env ...string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", Block(t, file, name))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s, block %s, failed (%v):\n%s", file, name, err, out)
	}
	return string(out)
}
