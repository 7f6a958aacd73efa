package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/docblocks"
	"github.com/apistack/apistack/servers/internal/testkit"
)

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
