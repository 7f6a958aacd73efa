package admin_test

import (
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/testkit"
)

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (127.0.0.x): another source.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

func TestWrongAdminTokens_AreLimitedPerSource(t *testing.T) {
	a := startAdmin(t, false)
	get := func(c *http.Client, token string) *http.Response {
		resp, _ := testkit.Request{Method: http.MethodGet, URL: a.url + "/pam/maintenance", Token: token, Client: c}.Do(t)
		return resp
	}
	attacker, other := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
	var statuses []int
	for range 40 {
		statuses = append(statuses, get(attacker, "adm_guess").StatusCode)
	}
	for i, s := range statuses {
		if i < 10 {
			assert.Equal(t, http.StatusUnauthorized, s, "wrong token %d", i+1)
		} else {
			assert.Equal(t, http.StatusTooManyRequests, s, "wrong token %d", i+1)
		}
	}
	blocked := get(attacker, adminToken)
	assert.Equal(t, http.StatusTooManyRequests, blocked.StatusCode, "a blocked source is refused before its token is compared")
	wait, err := strconv.Atoi(blocked.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.Positive(t, wait)
	assert.Equal(t, http.StatusOK, get(other, adminToken).StatusCode, "another source is not limited")
}
