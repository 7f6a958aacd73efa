package stacktest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/internal/descriptor"
)

// Contract returns a transport over http.DefaultTransport that holds every
// exchange with api to its spec (as opts say) and fails t on each violation.
func Contract(t testing.TB, api contract.API, opts ...contract.Option) *contract.Transport {
	t.Helper()
	rt, err := contract.ForAPI(api, http.DefaultTransport, append(opts, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))...)
	require.NoError(t, err)
	return rt
}

// HTTP serves srv's handler on a loopback port until t ends and returns its
// URL.
func HTTP(t testing.TB, srv descriptor.Server) string {
	t.Helper()
	h, err := srv.Handler()
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}
