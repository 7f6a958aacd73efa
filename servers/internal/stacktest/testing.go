package stacktest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/contract"
)

// Contract returns a transport over http.DefaultTransport that holds every
// exchange with api to its spec (as opts say) and fails t on each violation.
func Contract(t testing.TB, api contract.API, opts ...contract.Option) *contract.Transport {
	t.Helper()
	rt, err := contract.ForAPI(api, http.DefaultTransport, append(opts, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))...)
	require.NoError(t, err)
	return rt
}
