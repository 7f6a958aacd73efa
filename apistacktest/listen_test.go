package apistacktest_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

func mustListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}
