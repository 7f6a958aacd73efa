package docblocks

import "testing"

// RunModule runs the sh block named name of file, as written, from the
// repository's root, for a block that makes a Go module of its own in
// "$(mktemp -d)" beside a local clone. The temporary directory is the
// test's, and the go command works offline (GOPROXY=off, no checksum
// database, no workspace): the block passes only if every module it needs
// is pinned by this repository's go.mod and already in the module cache.
func RunModule(t testing.TB, file, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a module")
	}
	return Run(t, file, name, Root(t), "TMPDIR="+t.TempDir(),
		"GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
}
