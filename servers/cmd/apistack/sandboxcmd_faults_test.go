package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADME_SandboxFaultsSectionRuns runs the README's sandbox faults
// example, as written, against `apistack serve --demo`, then the same
// faults through `apistack sandbox faults`.
func TestREADME_SandboxFaultsSectionRuns(t *testing.T) {
	dir, creds, _ := runREADMEBlockOnDemo(t, "sandbox-faults-example")
	dataDir := filepath.Join(dir, "data")
	var fault struct {
		ID    string `json:"id"`
		Count int    `json:"count"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "fault.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &fault))
	assert.Equal(t, 2, fault.Count)
	assert.True(t, strings.HasPrefix(fault.ID, "flt-"))

	// The CLI: add, list, clear one, clear all.
	text, err := sandboxCLI(t, "--data-dir", dataDir, "create")
	require.NoError(t, err)
	var sb struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &sb))
	own := []string{"--sandbox-url", creds["sandboxes"]["base_url"], "--sandbox-token", sb.Token, "faults"}
	text, err = sandboxCLI(t, append(own, "add", "--api", "pam", "--operation", "ListGroups", "--count", "3", "--retry-after", "2s", sb.ID, "rate-limited")...)
	require.NoError(t, err)
	var added struct {
		ID, Kind, Operation string
		Count               int
		RetryAfter          string `json:"retry_after"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &added), text)
	assert.Equal(t, "rate-limited", added.Kind)
	assert.Equal(t, "ListGroups", added.Operation)
	assert.Equal(t, 3, added.Count)
	assert.Equal(t, "2s", added.RetryAfter)
	_, err = sandboxCLI(t, append(own, "add", "--attempt", "2", sb.ID, "webhook-fail")...)
	require.NoError(t, err)
	_, err = sandboxCLI(t, append(own, "add", "--api", "pam", "--operation", "NoSuchOperation", sb.ID, "drop")...)
	require.ErrorContains(t, err, "NoSuchOperation")
	list := func() []map[string]any {
		text, err := sandboxCLI(t, append(own, "list", sb.ID)...)
		require.NoError(t, err)
		var page struct{ Data []map[string]any }
		require.NoError(t, json.Unmarshal([]byte(text), &page), text)
		return page.Data
	}
	require.Len(t, list(), 2)
	_, err = sandboxCLI(t, append(own, "clear", sb.ID, added.ID)...)
	require.NoError(t, err)
	left := list()
	require.Len(t, left, 1)
	assert.Equal(t, "webhook-fail", left[0]["kind"])
	_, err = sandboxCLI(t, append(own, "clear", sb.ID)...)
	require.NoError(t, err)
	assert.Empty(t, list())
	_, err = sandboxCLI(t, append(own, "explode", sb.ID)...)
	require.ErrorContains(t, err, "unknown faults command")
}
