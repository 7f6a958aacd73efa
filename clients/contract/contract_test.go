package contract_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/gen/pamapi"
	protocolcontract "github.com/apistack/apistack/protocol/contract"
)

// The client-side path hands out the shared implementation: its options and
// violations are the protocol package's, and a response that breaks the spec
// fails the call (or is reported, with OnViolation) through either path.
func TestForAPI_IsTheSharedTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range map[string]string{"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "9",
			"X-RateLimit-Reset": "1700000000", "X-RateLimit-Retry-At": "1700000000"} {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`)) // a page without its required "list"
	}))
	defer srv.Close()
	bearer := func(_ context.Context, r *http.Request) error { r.Header.Set("Authorization", "Bearer t"); return nil }

	tests := []struct {
		name string
		opts []contract.Option
		fail bool
	}{
		{"fails the call", nil, true},
		{"reported through an option of the protocol package", []contract.Option{protocolcontract.WithoutRequestValidation()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rt *protocolcontract.Transport
			rt, err := contract.ForAPI(contract.PAM, nil, tt.opts...)
			require.NoError(t, err)
			client, err := pamapi.NewClientWithResponses(srv.URL, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
			require.NoError(t, err)
			_, err = client.ListGroupsWithResponse(context.Background(), "acme", nil, bearer)
			var v *contract.Violation
			require.True(t, errors.As(err, &v), "want a violation, got %v", err)
			assert.Equal(t, "response", v.Side)
			assert.Contains(t, v.Error(), `property "list" is missing`)
		})
	}

	var got []*protocolcontract.Violation
	rt, err := contract.ForAPI(contract.PAM, nil, contract.OnViolation(func(v *contract.Violation) { got = append(got, v) }))
	require.NoError(t, err)
	client, err := pamapi.NewClientWithResponses(srv.URL, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	resp, err := client.ListGroupsWithResponse(context.Background(), "acme", nil, bearer)
	require.NoError(t, err, "OnViolation reports and lets the call go on")
	assert.Equal(t, http.StatusOK, resp.StatusCode())
	require.Len(t, got, 1)
	assert.Equal(t, "response", got[0].Side)
}
