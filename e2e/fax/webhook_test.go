package fax_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/gen/faxwebhooks"
	"github.com/apistack/apistack/protocol/contract"
)

const deliveredEvent = `{"data":{"event_type":"fax.delivered","id":"4b2e8e2a-5a43-4f4c-9f55-2c6c1f8f0a11",` +
	`"occurred_at":"2026-01-02T03:04:05.123456Z","record_type":"event","payload":{"call_duration_secs":75,` +
	`"connection_id":"app-1","direction":"outbound","fax_id":"0e5a3c8f-1f0a-4f57-9c1d-8a3b2c4d5e6f",` +
	`"from":"+13125550100","page_count":3,"status":"delivered","to":"+14155550123","user_id":"acct-1"}},` +
	`"meta":{"attempt":2,"delivered_to":"https://receiver.example.com/hooks"}}`

// The receiver is protocol/faxwebhook's; its tests stay here, through
// clients/fax, because they check each answer against webhooks.yaml with the
// contract transport: a test in protocol/faxwebhook importing it would put
// kin-openapi into the go.sum of every module that imports clients/fax (tidy
// loads the tests of the packages a module imports).

func sign(key ed25519.PrivateKey, ts string, body []byte) string {
	msg := append(append([]byte(ts), '|'), body...)
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
}

func TestWebhookHandler_AcceptsAVerifiedEventAndDecodesItsType(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	var got fax.Event
	h, err := fax.NewWebhookHandler(pub, func(_ context.Context, e fax.Event) error { got = e; return nil })
	require.NoError(t, err)

	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req := httptest.NewRequest(http.MethodPost, "/any/mount/path", bytes.NewReader([]byte(deliveredEvent)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(fax.HeaderTimestamp, ts)
	req.Header.Set(fax.HeaderSignature, sign(priv, ts, []byte(deliveredEvent)))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)

	require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	assert.Equal(t, "fax.delivered", got.Type)
	assert.Equal(t, 2, got.Attempt)
	assert.Equal(t, "0e5a3c8f-1f0a-4f57-9c1d-8a3b2c4d5e6f", got.FaxID)
	d, ok := got.Value.(faxwebhooks.FaxDeliveredEvent)
	require.True(t, ok)
	assert.Equal(t, 3, d.Payload.PageCount)
	assert.Equal(t, []byte(deliveredEvent), got.Raw)
}

func TestWebhookHandler_RejectsForgedStaleAndMalformedDeliveries(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	_, otherKey, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	fresh := strconv.FormatInt(now.Unix(), 10)
	body := []byte(deliveredEvent)
	signed := func(b string) []byte { return []byte(b) }

	tests := []struct {
		name      string
		method    string
		body      []byte
		ts        string
		sig       string
		fnErr     error
		want      int
		fnInvoked bool
	}{
		{name: "no signature headers", body: body, want: http.StatusUnauthorized},
		{name: "timestamp not a number", body: body, ts: "yesterday", sig: sign(priv, "yesterday", body), want: http.StatusUnauthorized},
		{name: "replayed six minutes later", body: body, ts: strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10),
			sig: sign(priv, strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10), body), want: http.StatusUnauthorized},
		{name: "timestamp from the future", body: body, ts: strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10),
			sig: sign(priv, strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10), body), want: http.StatusUnauthorized},
		{name: "signed by another key", body: body, ts: fresh, sig: sign(otherKey, fresh, body), want: http.StatusUnauthorized},
		{name: "body changed after signing", body: bytes.Replace(body, []byte(`"page_count":3`), []byte(`"page_count":4`), 1),
			ts: fresh, sig: sign(priv, fresh, body), want: http.StatusUnauthorized},
		{name: "timestamp changed after signing", body: body, ts: strconv.FormatInt(now.Unix()-1, 10), sig: sign(priv, fresh, body), want: http.StatusUnauthorized},
		{name: "signature not base64", body: body, ts: fresh, sig: "%%%", want: http.StatusUnauthorized},
		{name: "signed but not JSON", body: signed("not json"), ts: fresh, sig: sign(priv, fresh, []byte("not json")), want: http.StatusBadRequest},
		{name: "signed but unknown event type", body: bytes.Replace(body, []byte("fax.delivered"), []byte("fax.exploded"), 1), ts: fresh,
			sig: sign(priv, fresh, bytes.Replace(body, []byte("fax.delivered"), []byte("fax.exploded"), 1)), want: http.StatusBadRequest},
		{name: "signed but unknown payload field", body: bytes.Replace(body, []byte(`"page_count":3`), []byte(`"page_count":3,"pages":3`), 1), ts: fresh,
			sig: sign(priv, fresh, bytes.Replace(body, []byte(`"page_count":3`), []byte(`"page_count":3,"pages":3`), 1)), want: http.StatusBadRequest},
		{name: "signed but without meta", body: signed(`{"data":{"event_type":"fax.queued"}}`), ts: fresh,
			sig: sign(priv, fresh, []byte(`{"data":{"event_type":"fax.queued"}}`)), want: http.StatusBadRequest},
		{name: "not a POST", method: http.MethodGet, body: body, ts: fresh, sig: sign(priv, fresh, body), want: http.StatusMethodNotAllowed},
		{name: "receiver function fails", body: body, ts: fresh, sig: sign(priv, fresh, body), fnErr: errors.New("db down"),
			want: http.StatusInternalServerError, fnInvoked: true},
		{name: "valid", body: body, ts: fresh, sig: sign(priv, fresh, body), want: http.StatusNoContent, fnInvoked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var invoked atomic.Bool
			h, err := fax.NewWebhookHandler(pub, func(context.Context, fax.Event) error { invoked.Store(true); return tt.fnErr },
				fax.WithClock(func() time.Time { return now }))
			require.NoError(t, err)
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			// Over real HTTP, each answer checked against webhooks.yaml.
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			rt, err := contract.ForAPI(contract.FaxWebhooks, nil, contract.WithoutRequestValidation(), contract.OnViolation(func(v *contract.Violation) {
				t.Errorf("the webhook handler breaks webhooks.yaml: %v", v)
			}))
			require.NoError(t, err)
			req, err := http.NewRequest(method, srv.URL+"/", bytes.NewReader(tt.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if tt.ts != "" {
				req.Header.Set(fax.HeaderTimestamp, tt.ts)
			}
			if tt.sig != "" {
				req.Header.Set(fax.HeaderSignature, tt.sig)
			}
			resp, err := (&http.Client{Transport: rt}).Do(req)
			require.NoError(t, err)
			answer, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.StatusCode, string(answer))
			assert.Equal(t, tt.fnInvoked, invoked.Load())
			if resp.StatusCode != http.StatusNoContent {
				assert.Contains(t, string(answer), `"error"`)
			}
		})
	}
}

func TestParseWebhookPublicKey_RefusesWrongSizes(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	got, err := fax.ParseWebhookPublicKey(base64.StdEncoding.EncodeToString(pub))
	require.NoError(t, err)
	assert.Equal(t, pub, got)
	_, err = fax.ParseWebhookPublicKey(base64.StdEncoding.EncodeToString(pub[:16]))
	assert.Error(t, err)
	_, err = fax.ParseWebhookPublicKey("not base64!")
	assert.Error(t, err)
}

func TestWebhookHandler_AnOversizedBodyAnswersADeclared413(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	h, err := fax.NewWebhookHandler(pub, func(context.Context, fax.Event) error { return nil })
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rt, err := contract.ForAPI(contract.FaxWebhooks, nil, contract.WithoutRequestValidation(), contract.OnViolation(func(v *contract.Violation) {
		t.Errorf("the webhook handler breaks webhooks.yaml: %v", v)
	}))
	require.NoError(t, err)

	body := bytes.Repeat([]byte(" "), 1<<20+1)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(fax.HeaderTimestamp, ts)
	req.Header.Set(fax.HeaderSignature, sign(priv, ts, body))
	resp, err := (&http.Client{Transport: rt}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}
