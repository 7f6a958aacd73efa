package contract_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/protocol/contract"
)

// fakePAM answers every request with the given status, headers and body, so
// the test controls exactly what crosses the wire.
func fakePAM(status int, header map[string]string, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
}

var rateHeaders = map[string]string{
	"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "9", "X-RateLimit-Reset": "1700000000", "X-RateLimit-Retry-At": "1700000000",
}

func withoutHeader(name string) map[string]string {
	h := map[string]string{}
	for k, v := range rateHeaders {
		if k != name {
			h[k] = v
		}
	}
	return h
}

func TestTransport_ChecksResponses(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    map[string]string
		body      string
		violation string
	}{
		{"valid page", 200, rateHeaders, `{"list":[]}`, ""},
		{"missing required field", 200, rateHeaders, `{}`, `property "list" is missing`},
		{"wrong type", 200, rateHeaders, `{"list":{}}`, "value must be an array"},
		{"missing required header", 200, withoutHeader("X-RateLimit-Reset"), `{"list":[]}`, `"X-RateLimit-Reset" missing`},
		{"undeclared status", 418, rateHeaders, `{}`, "status is not supported"},
		{"error name outside the enum", 403, rateHeaders, `{"code":403,"error":"nope","message":"m","error_cause":[]}`, "value is not one of the allowed values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakePAM(tt.status, tt.header, tt.body)
			defer srv.Close()
			rt, err := contract.ForAPI(contract.PAM, nil)
			require.NoError(t, err)
			client, err := pamapi.NewClientWithResponses(srv.URL, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
			require.NoError(t, err)
			_, err = client.ListGroupsWithResponse(context.Background(), "acme", nil,
				func(_ context.Context, r *http.Request) error { r.Header.Set("Authorization", "Bearer t"); return nil })
			if tt.violation == "" {
				require.NoError(t, err)
				return
			}
			var v *contract.Violation
			require.True(t, errors.As(err, &v), "want a violation, got %v", err)
			assert.Equal(t, "response", v.Side)
			assert.Equal(t, tt.status, v.Status)
			assert.Contains(t, v.Error(), tt.violation)
		})
	}
}

func TestTransport_RefusesBadRequestsBeforeSending(t *testing.T) {
	sent := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { sent++ }))
	defer srv.Close()
	rt, err := contract.ForAPI(contract.PAM, nil)
	require.NoError(t, err)
	client, err := pamapi.NewClientWithResponses(srv.URL, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)

	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"no bearer token", func() error {
			_, err := client.ListGroups(context.Background(), "acme", nil)
			return err
		}, "Bearer"},
		{"count out of range", func() error {
			n := 5000
			_, err := client.ListGroups(context.Background(), "acme", &pamapi.ListGroupsParams{Count: &n},
				func(_ context.Context, r *http.Request) error { r.Header.Set("Authorization", "Bearer t"); return nil })
			return err
		}, "count"},
		{"body missing a field", func() error {
			_, err := client.IssueServiceTokenWithBody(context.Background(), "acme", "application/json", strings.NewReader(`{"key_id":"x"}`))
			return err
		}, "key_secret"},
		{"unknown path", func() error {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/nowhere", nil)
			_, err := (&http.Client{Transport: rt}).Do(req)
			return err
		}, "no matching operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var v *contract.Violation
			require.True(t, errors.As(err, &v), "want a violation, got %v", err)
			assert.Equal(t, "request", v.Side)
			assert.Contains(t, v.Error(), tt.want)
		})
	}
	assert.Zero(t, sent, "a request that breaks the spec is never sent")
}

func TestTransport_OnViolationReportsAndCarriesOn(t *testing.T) {
	srv := fakePAM(200, rateHeaders, `{}`)
	defer srv.Close()
	var got []*contract.Violation
	rt, err := contract.ForAPI(contract.PAM, nil, contract.OnViolation(func(v *contract.Violation) { got = append(got, v) }))
	require.NoError(t, err)
	client, err := pamapi.NewClientWithResponses(srv.URL, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	resp, err := client.ListGroupsWithResponse(context.Background(), "acme", nil,
		func(_ context.Context, r *http.Request) error { r.Header.Set("Authorization", "Bearer t"); return nil })
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode())
	require.Len(t, got, 1)
	assert.Equal(t, "response", got[0].Side)
}
