package clients_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients"
	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
)

// rateLimited answers every call with a 429 in the API's own error shape,
// asking for a wait of ten minutes (longer than MaxWait), after answering the
// login of the APIs that have one.
func rateLimited(t *testing.T, contentType, body string, extra map[string]string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/service_token"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"bearer_token":"t","expires_at":"2999-01-01T00:00:00Z","team_name":"demo"}`))
			return
		case strings.HasSuffix(r.URL.Path, "/authentication/login"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"SUCCESS","token":{"tokenType":"Bearer","accessToken":"t","expiresIn":3600,"scope":"config:read"}}`))
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Retry-After", "600")
		for k, v := range extra {
			w.Header().Set(k, v)
		}
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// Every client's error answer implements clients.Error, says its prefix once,
// and a wait longer than MaxWait ends the call at once in a *clients.RetryError
// holding that answer.
func TestErrors_OneInterfaceAcrossTheClients(t *testing.T) {
	ctx := context.Background()
	policy := clients.RetryPolicy{MaxWait: time.Minute}
	for _, tc := range []struct {
		name, prefix, code, requestID string
		contentType, body             string
		call                          func(t *testing.T, url string) error
	}{
		{
			name: "pam", prefix: "pam: get group: ", code: "too_many_requests",
			contentType: "application/json",
			body:        `{"code":429,"error":"too_many_requests","message":"slow down"}`,
			call: func(t *testing.T, url string) error {
				c, err := pam.New(pam.Config{BaseURL: url, Team: "demo", KeyID: "k", KeySecret: "s", Retry: policy})
				require.NoError(t, err)
				_, err = c.GetGroup(ctx, "admins")
				return err
			},
		},
		{
			name: "fax", prefix: "fax: get: ", code: "10011",
			contentType: "application/json",
			body:        `{"errors":[{"code":"10011","title":"Too many requests","detail":"slow down"}]}`,
			call: func(t *testing.T, url string) error {
				c, err := fax.New(fax.Config{BaseURL: url, APIKey: "k", Retry: policy})
				require.NoError(t, err)
				_, err = c.GetFax(ctx, "0b9f3c2e-8a4e-4a53-9d55-6f0e6f1d2a11")
				return err
			},
		},
		{
			name: "restaurant", prefix: "restaurant: get menus ", code: "RATE_LIMITED", requestID: "req-1",
			contentType: "application/json",
			body:        `{"status":429,"code":10429,"message":"slow down","messageKey":"RATE_LIMITED","requestId":"req-1","canRetry":true,"errors":[]}`,
			call: func(t *testing.T, url string) error {
				c, err := restaurant.New(restaurant.Config{BaseURL: url, ClientID: "c", ClientSecret: "s",
					Restaurant: "0b9f3c2e-8a4e-4a53-9d55-6f0e6f1d2a11", Retry: policy})
				require.NoError(t, err)
				_, err = c.GetMenu(ctx, "0b9f3c2e-8a4e-4a53-9d55-6f0e6f1d2a12")
				return err
			},
		},
		{
			name: "storage", prefix: "storage: get lifecycle of ", code: "SlowDown", requestID: "req-2",
			contentType: "application/xml",
			body:        `<Error><Code>SlowDown</Code><Message>slow down</Message><Resource>/b</Resource><RequestId>req-2</RequestId></Error>`,
			call: func(t *testing.T, url string) error {
				c, err := storage.New(storage.Config{Endpoint: url, Region: "r", KeyID: "k", Secret: "s", Retry: policy})
				require.NoError(t, err)
				_, err = c.GetLifecycle(ctx, "b")
				return err
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := rateLimited(t, tc.contentType, tc.body, nil)
			start := time.Now()
			err := tc.call(t, srv.URL)
			require.Error(t, err)
			assert.Less(t, time.Since(start), 30*time.Second, "no ten-minute wait")
			assert.Equal(t, int32(1), calls.Load(), "no retry: the asked wait is longer than MaxWait")

			var apiErr clients.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusTooManyRequests, apiErr.HTTPStatus())
			assert.Equal(t, tc.code, apiErr.ErrorCode())
			assert.Equal(t, "slow down", apiErr.ErrorMessage())
			assert.Equal(t, tc.requestID, apiErr.ErrorRequestID())
			assert.True(t, apiErr.Retryable())

			var re *clients.RetryError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, clients.WaitTooLong, re.Reason)
			assert.Equal(t, 1, re.Attempts)
			assert.GreaterOrEqual(t, re.Wait, 599*time.Second)

			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, tc.prefix), msg)
			assert.Equal(t, 1, strings.Count(msg, tc.name+":"), "the prefix once: %s", msg)
			assert.True(t, errors.Is(err, apiErr))
		})
	}
}
