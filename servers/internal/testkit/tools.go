package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// Need ends t when err says a program it needs is missing (what names the
// program and how to get it): a skip, except under CI (CI=true), where
// .ci/run installs every program the tests need, so it is a failure.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI (.ci/run installs it): %v", what, err)
	}
	t.Skipf("%s is missing: %v", what, err)
}

// Tools returns the paths of the named programs on PATH; a missing one ends
// t as Need says.
func Tools(t testing.TB, names ...string) []string {
	t.Helper()
	paths := make([]string, len(names))
	for i, name := range names {
		p, err := exec.LookPath(name)
		Need(t, name, err)
		paths[i] = p
	}
	return paths
}
