package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --cpu-profile (here through its variable) profiles the whole run: the file
// is a gzipped pprof profile once serve has stopped.
func TestServe_CPUProfileIsWrittenWhenServeStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv("APISTACK_CPU_PROFILE", path)
	_, _, stop := startServe(t, t.TempDir())
	require.NoError(t, stop())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(data), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, data[:2], "pprof profiles are gzipped")
}
