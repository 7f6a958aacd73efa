package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSandboxCommand_AdvanceAndClock(t *testing.T) {
	dataDir := t.TempDir()
	_, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	out, err := sandboxCLI(t, "--data-dir", dataDir, "create", "--clock", "frozen")
	require.NoError(t, err)
	var created struct {
		ID    string    `json:"id"`
		Token string    `json:"token"`
		Now   time.Time `json:"now"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created), out)
	own := []string{"--data-dir", dataDir, "--sandbox-token", created.Token}
	type clockView struct {
		Mode   string    `json:"mode"`
		Now    time.Time `json:"now"`
		Offset string    `json:"offset"`
	}
	read := func(out string) clockView {
		var c clockView
		require.NoError(t, json.Unmarshal([]byte(out), &c), out)
		return c
	}

	out, err = sandboxCLI(t, append(own, "clock", created.ID)...)
	require.NoError(t, err)
	assert.Equal(t, clockView{Mode: "frozen", Now: created.Now, Offset: read(out).Offset}, read(out))

	out, err = sandboxCLI(t, append(own, "advance", created.ID, "1h30m")...)
	require.NoError(t, err)
	assert.Equal(t, created.Now.Add(90*time.Minute), read(out).Now)

	to := created.Now.Add(48 * time.Hour).UTC()
	out, err = sandboxCLI(t, append(own, "advance", "--set", to.Format(time.RFC3339Nano), created.ID)...)
	require.NoError(t, err)
	assert.Equal(t, to, read(out).Now)

	// Bad arguments call nothing; the API refuses going back.
	for _, args := range [][]string{
		{"advance", created.ID}, {"advance", created.ID, "ten"}, {"advance", created.ID, "1m", "2m"},
		{"advance", "--set", "tomorrow", created.ID}, {"advance", "--set", to.Format(time.RFC3339), created.ID, "1m"},
		{"clock"}, {"clock", "--set", to.Format(time.RFC3339), created.ID},
	} {
		_, err := sandboxCLI(t, append(own, args...)...)
		assert.Error(t, err, "%q", args)
	}
	_, err = sandboxCLI(t, append(own, "advance", "--set", created.Now.Format(time.RFC3339Nano), created.ID)...)
	require.ErrorContains(t, err, "400")
	_, err = sandboxCLI(t, append(own, "advance", created.ID, "-1m")...)
	require.ErrorContains(t, err, "400")
	out, err = sandboxCLI(t, append(own, "clock", created.ID)...)
	require.NoError(t, err)
	assert.Equal(t, to, read(out).Now, "refused changes changed nothing")
}

// TestREADME_SandboxClockRuns runs the README's sandbox clock example, as
// written, against `apistack serve --demo`.
func TestREADME_SandboxClockRuns(t *testing.T) {
	dir := t.TempDir()
	_, _, stop := startServe(t, filepath.Join(dir, "data"))
	defer func() { require.NoError(t, stop()) }()
	out := runREADMEBlock(t, "sandbox-clock-example", dir)
	assert.Contains(t, out, "true", "the fax was delivered when the advance answered")
}
