package contract_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/protocol/faxwebhook"
)

const faxEvent = `{"data":{"event_type":"fax.queued","id":"6a09cdc3-8948-47f0-aa62-74ac943d6c58",
"occurred_at":"2024-01-02T03:04:05.123456Z","record_type":"event","payload":{"fax_id":"0c7d6f8a-1d7b-4a52-a3a5-1c1f2d3e4f50",
"connection_id":"c1","direction":"outbound","from":"+13125550100","to":"+13125550111","status":"queued","user_id":"u1"}},
"meta":{"attempt":1,"delivered_to":"http://receiver.invalid/"}}`

// TestTransport_WebhookDeliveriesAreAuthenticated: webhooks.yaml declares the
// signature header as its security scheme, so a delivery without it breaks
// the spec, and with WithCredentialCheck a wrong signature does too.
func TestTransport_WebhookDeliveriesAreAuthenticated(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	sent := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sent++
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	verify := contract.WithCredentialCheck(func(scheme *openapi3.SecurityScheme, req *http.Request, body []byte) error {
		assert.Equal(t, "Webhook-Signature-Ed25519", scheme.Name)
		return faxwebhook.VerifySignature(pub, req.Header.Get(faxwebhook.HeaderTimestamp), req.Header.Get(faxwebhook.HeaderSignature), body, time.Now(), 5*time.Minute)
	})
	presence, err := contract.ForAPI(contract.FaxWebhooks, nil)
	require.NoError(t, err)
	signature, err := contract.ForAPI(contract.FaxWebhooks, nil, verify)
	require.NoError(t, err)

	body := []byte(faxEvent)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	good := base64.StdEncoding.EncodeToString(ed25519.Sign(priv, append([]byte(ts+"|"), body...)))
	other := base64.StdEncoding.EncodeToString(ed25519.Sign(priv, append([]byte(ts+"|"), "{}"...)))
	tests := []struct {
		name      string
		rt        http.RoundTripper
		signature string
		wantErr   bool
	}{
		{"signed, presence checked", presence, good, false},
		{"signed, signature checked", signature, good, false},
		{"unsigned", presence, "", true},
		{"signed over another body, presence checked", presence, other, false},
		{"signed over another body, signature checked", signature, other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := sent
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/", bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(faxwebhook.HeaderTimestamp, ts)
			if tt.signature != "" {
				req.Header.Set(faxwebhook.HeaderSignature, tt.signature)
			}
			resp, err := (&http.Client{Transport: tt.rt}).Do(req)
			if !tt.wantErr {
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusNoContent, resp.StatusCode)
				return
			}
			var v *contract.Violation
			require.True(t, errors.As(err, &v), "want a violation, got %v", err)
			var serr *openapi3filter.SecurityRequirementsError
			assert.True(t, errors.As(err, &serr), "the security requirement fails: %v", err)
			assert.Equal(t, before, sent, "a refused delivery is not sent")
		})
	}
}
