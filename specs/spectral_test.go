package specs

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spectralPath finds the spectral CLI: $APISTACK_SPECTRAL, else the
// repository's .tools (make lint installs it).
func spectralPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("APISTACK_SPECTRAL"); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", ".tools", "node_modules", ".bin", "spectral"))
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("spectral is not installed (%s): CI installs it with make lint", p)
		}
		t.Skipf("spectral is not installed (%s); run make lint or set APISTACK_SPECTRAL", p)
	}
	return p
}

// TestSpectral_RefusesConstructsValidatorsReadDifferently runs the
// repository's ruleset on a fixture holding each construct it refuses, and
// the allowed forms beside them.
func TestSpectral_RefusesConstructsValidatorsReadDifferently(t *testing.T) {
	spectral := spectralPath(t)
	cmd := exec.Command(spectral, "lint", "--ruleset", filepath.Join("..", ".spectral.yaml"), "--format", "json",
		filepath.Join("..", "testdata", "spectral", "nullable-bad.yaml"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr, "spectral fails on the fixture: %s %s", stdout.String(), stderr.String())
	var results []struct {
		Code     string   `json:"code"`
		Path     []string `json:"path"`
		Severity int      `json:"severity"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &results), stdout.String())
	found := map[string]string{} // property -> rule
	for _, r := range results {
		if !strings.HasPrefix(r.Code, "nullable-") {
			continue
		}
		assert.Equal(t, 0, r.Severity, "%s is an error", r.Code)
		require.GreaterOrEqual(t, len(r.Path), 5, "%v", r.Path)
		found[r.Path[4]] = r.Code
	}
	assert.Equal(t, map[string]string{
		"parentAllOf": "nullable-beside-composition",
		"parentOneOf": "nullable-beside-composition",
		"parentAnyOf": "nullable-beside-composition",
		"parentRef":   "nullable-beside-composition",
		"rounding":    "nullable-enum-lists-null",
	}, found, "roundingWithNull and plain are allowed")
}

// TestSpectral_RefusesAnOperationWithoutItsRoles runs the repository's
// ruleset on a fixture whose operations declare who may call them, or fail
// to: the one without x-apistack-roles and the one with an empty list are
// refused, the open one and the declared ones are not.
func TestSpectral_RefusesAnOperationWithoutItsRoles(t *testing.T) {
	spectral := spectralPath(t)
	cmd := exec.Command(spectral, "lint", "--ruleset", filepath.Join("..", ".spectral.yaml"), "--format", "json",
		filepath.Join("..", "testdata", "spectral", "roles-bad.yaml"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr, "spectral fails on the fixture: %s %s", stdout.String(), stderr.String())
	var results []struct {
		Code     string   `json:"code"`
		Path     []string `json:"path"`
		Severity int      `json:"severity"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &results), stdout.String())
	found := map[string]string{} // method and path -> rule
	for _, r := range results {
		if !strings.HasPrefix(r.Code, "apistack-roles-") {
			continue
		}
		assert.Equal(t, 0, r.Severity, "%s is an error", r.Code)
		require.GreaterOrEqual(t, len(r.Path), 3, "%v", r.Path)
		found[r.Path[2]+" "+r.Path[1]] = r.Code
	}
	assert.Equal(t, map[string]string{
		"post /things":   "apistack-roles-declared",
		"delete /things": "apistack-roles-declared",
	}, found)
}
