package clients_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverSide are the modules a service importing the clients must not
// compile: the server framework, the validator and its router, database
// drivers, migrations, PDF, the docs UI, metrics, the browser driver.
var serverSide = []string{
	"github.com/labstack/echo", "github.com/getkin/kin-openapi", "github.com/gorilla/mux",
	"github.com/jackc/pgx", "modernc.org/sqlite", "modernc.org/libc", "github.com/pressly/goose",
	"github.com/pdfcpu/pdfcpu", "github.com/swaggest/swgui", "github.com/prometheus/",
	"github.com/chromedp/", "github.com/nyaruka/phonenumbers",
}

// clientPackages are the packages a service imports to call the APIs.
var clientPackages = []string{
	"github.com/apistack/apistack/clients",
	"github.com/apistack/apistack/clients/pam",
	"github.com/apistack/apistack/clients/fax",
	"github.com/apistack/apistack/clients/storage",
	"github.com/apistack/apistack/clients/restaurant",
}

func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// generatedClients are the generated client packages (models + client).
var generatedClients = []string{
	"github.com/apistack/apistack/gen/pamapi",
	"github.com/apistack/apistack/gen/faxapi",
	"github.com/apistack/apistack/gen/storageapi",
	"github.com/apistack/apistack/gen/restaurantapi",
	"github.com/apistack/apistack/gen/adminapi",
	"github.com/apistack/apistack/gen/faxwebhooks",
}

// Each client, ergonomic or generated, compiles at most 25 non-standard
// packages, none server-side.
func TestImportable_ClientDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range append(append([]string(nil), clientPackages[1:]...), generatedClients...) {
		t.Run(filepath.Base(pkg), func(t *testing.T) {
			out := goCmd(t, ".", nil, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
			deps := strings.Fields(out)
			t.Logf("%s: %d non-standard packages", pkg, len(deps))
			assert.LessOrEqual(t, len(deps), 25, "%s", out)
			for _, d := range deps {
				for _, s := range serverSide {
					assert.False(t, strings.HasPrefix(d, s), "%s compiles %s", pkg, d)
				}
				assert.False(t, strings.HasPrefix(d, "github.com/apistack/apistack/servers"), "%s compiles %s", pkg, d)
				assert.False(t, strings.HasSuffix(d, "server"), "%s compiles the generated server %s", pkg, d)
			}
		})
	}
}

// clients/contract is its own import, for tests that check traffic against
// the specs: it compiles the validator (kin-openapi and its router) but no
// server framework, database, migration, PDF, UI or metrics code, and no
// generated server package (it reads the specs from package specs).
func TestImportable_ContractCompilesNoServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const pkg = "github.com/apistack/apistack/protocol/contract"
	out := goCmd(t, ".", nil, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
	deps := strings.Fields(out)
	t.Logf("%s: %d non-standard packages", pkg, len(deps))
	for _, d := range deps {
		for _, s := range serverSide {
			if strings.HasPrefix(d, "github.com/getkin/kin-openapi") || strings.HasPrefix(d, "github.com/gorilla/mux") {
				continue // the validator is what the package is for
			}
			assert.False(t, strings.HasPrefix(d, s), "%s compiles %s", pkg, d)
		}
		assert.False(t, strings.HasPrefix(d, "github.com/apistack/apistack/gen/") && strings.HasSuffix(d, "server"),
			"%s compiles the generated server %s", pkg, d)
	}
}

// A throwaway module importing only the clients (and the S3 SDK signer)
// builds, and after `go mod tidy` neither its go.mod nor its go.sum names a
// server-side module. Tidy records the modules of every imported package's
// own test imports too (it loads the tests of every package in "all"), so
// this holds only while the clients' tests import no server package: the
// end-to-end tests live in e2e, and the runnable examples
// call their servers in a process of their own (internal/examplestack).
func TestImportable_ThrowawayModuleTidy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	var imports strings.Builder
	for _, p := range append(clientPackages, "github.com/apistack/apistack/clients/storage/s3compat") {
		imports.WriteString("\t_ \"" + p + "\"\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/throwaway\n\ngo 1.26.8\n\n"+
		"require github.com/apistack/apistack v0.0.0\n\nreplace github.com/apistack/apistack => "+root+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport (\n"+imports.String()+")\n\nfunc main() {}\n"), 0o644))
	// Tidy loads the tests of every package it imports, so it needs modules
	// that only the dependencies' own tests use (go-retryablehttp's tests
	// import go-hclog, oapi-codegen/runtime's import nullable). A build or
	// `go mod download` does not fetch those, so the cache a new machine has
	// after them is not enough: download the whole module graph of this
	// repository first (verified by its go.sum; a no-op on a cache that holds
	// it), so the test does not depend on what earlier work left behind. The
	// modules are named one by one: `go mod download all` would also write
	// go.sum lines for the whole graph into the repository's go.sum.
	mods := strings.Fields(goCmd(t, root, nil, "list", "-m", "-f", "{{if not .Main}}{{.Path}}@{{.Version}}{{end}}", "all"))
	goCmd(t, root, nil, append([]string{"mod", "download"}, mods...)...)
	// Then offline: the module cache is the only source, and no checksum
	// database is asked.
	env := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off"}
	goCmd(t, dir, env, "mod", "tidy")
	goCmd(t, dir, env, "build", "-o", filepath.Join(dir, "throwaway"), ".")
	for _, file := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		var modules []string
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(strings.TrimSpace(line))
			if len(f) < 2 || strings.HasPrefix(f[0], "//") || f[0] == "module" || f[0] == "go" || f[1] == "(" {
				continue
			}
			mod := f[0]
			if mod == "require" || mod == "replace" {
				mod = f[1]
			}
			if len(modules) > 0 && modules[len(modules)-1] == mod {
				continue // go.sum: the module's zip and go.mod lines
			}
			modules = append(modules, mod)
			for _, s := range serverSide {
				assert.False(t, strings.HasPrefix(mod, s), "%s names %s", file, mod)
			}
		}
		t.Logf("%s names %d modules: %s", file, len(modules), strings.Join(modules, " "))
		assert.NotEmpty(t, modules)
	}
}
