package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseServeFlags_DatabaseMaxConns(t *testing.T) {
	c, err := parseServeFlags([]string{"--database-max-conns", "12"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 12, c.DatabaseMaxConns)
	c, err = parseServeFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Zero(t, c.DatabaseMaxConns, "0: the default pool size")
	_, err = parseServeFlags([]string{"--database-max-conns", "-1"}, io.Discard)
	assert.ErrorContains(t, err, "--database-max-conns -1")
}
