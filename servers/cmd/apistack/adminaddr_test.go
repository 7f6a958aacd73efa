package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServeFlags_AdminAddrMustBeLoopbackUnlessAllowed(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:8089", "127.0.0.2:0", "[::1]:8089", "localhost:8089", "LOCALHOST:0"} {
		c, err := parseServeFlags([]string{"--admin-addr", addr}, io.Discard)
		require.NoError(t, err, addr)
		assert.Equal(t, addr, c.AdminAddr)
	}
	for _, addr := range []string{":8089", "0.0.0.0:8089", "[::]:8089", "192.0.2.10:8089", "admin.example.com:8089", "8089"} {
		_, err := parseServeFlags([]string{"--admin-addr", addr}, io.Discard)
		assert.Error(t, err, addr)
		if addr != "8089" {
			assert.ErrorContains(t, err, "--admin-allow-remote", addr)
		}
		c, err := parseServeFlags([]string{"--admin-addr", addr, "--admin-allow-remote"}, io.Discard)
		require.NoError(t, err, "%s with --admin-allow-remote", addr)
		assert.True(t, c.AdminAllowRemote)
	}

	t.Setenv("APISTACK_ADMIN_ADDR", "0.0.0.0:8089")
	_, err := parseServeFlags(nil, io.Discard)
	assert.Error(t, err, "from APISTACK_ADMIN_ADDR")
	t.Setenv("APISTACK_ADMIN_ALLOW_REMOTE", "true")
	_, err = parseServeFlags(nil, io.Discard)
	assert.NoError(t, err, "with APISTACK_ADMIN_ALLOW_REMOTE=true")
}

// serve itself refuses to start on a non-loopback admin address: it listens
// on no port.
func TestServe_RefusesARemoteAdminAddr(t *testing.T) {
	pamLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	pamAddr := pamLn.Addr().String()
	require.NoError(t, pamLn.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = serve(ctx, []string{"--data-dir", t.TempDir(), "--pam-addr", pamAddr, "--admin-addr", "0.0.0.0:0"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "not on loopback")
	_, err = http.Get("http://" + pamAddr + "/healthz")
	assert.Error(t, err, "nothing listens")
}
