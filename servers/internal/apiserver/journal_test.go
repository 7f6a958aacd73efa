package apiserver_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/servers/internal/apiserver"
)

func TestRedactHeaders_HidesEverySecretHeader(t *testing.T) {
	h := http.Header{
		"Authorization":                   {"Bearer pat_secret"},
		"Cookie":                          {"s=1"},
		"X-Api-Key":                       {"k"},
		"Webhook-Signature-Ed25519":       {"sig"},
		"X-Cloud-Security-Token":          {"t"},
		"Content-Type":                    {"application/json"},
		"Platform-Restaurant-External-Id": {"7d3e6a1c"},
	}
	got := apiserver.RedactHeaders(h)
	for _, name := range []string{"Authorization", "Cookie", "X-Api-Key", "Webhook-Signature-Ed25519", "X-Cloud-Security-Token"} {
		assert.Equal(t, []string{apiserver.Redacted}, got[name], name)
	}
	assert.Equal(t, []string{"application/json"}, got["Content-Type"])
	assert.Equal(t, []string{"7d3e6a1c"}, got["Platform-Restaurant-External-Id"])
	assert.Equal(t, "Bearer pat_secret", h.Get("Authorization"), "the request's own headers are left alone")
}

func TestRedactBody_HidesSecretFields(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"token exchange", `{"key_id":"k1","key_secret":"s3cr3t"}`, `{"key_id":"k1","key_secret":"[redacted]"}`},
		{"nested token", `{"status":"SUCCESS","token":{"accessToken":"rst_x","tokenType":"Bearer"}}`, `{"status":"SUCCESS","token":"[redacted]"}`},
		{"list of keys", `{"keys":[{"key_id":"a","secret":"b"}]}`, `{"keys":[{"key_id":"a","secret":"[redacted]"}]}`},
		{"no secret", `{"name":"group"}`, `{"name":"group"}`},
		{"form", `to=%2B13125550800&from=x`, `to=%2B13125550800&from=x`},
		{"cut JSON naming a secret", `{"key_secret":"s3c`, apiserver.Redacted},
		{"empty", ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(apiserver.RedactBody([]byte(tc.in))))
		})
	}
}

func TestRedact_FindsSecretNamesInAnyCase(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"upper case field", `{"API_KEY":"k","name":"x"}`, `{"API_KEY":"[redacted]","name":"x"}`},
		{"mixed case field", `{"PassWord":"p"}`, `{"PassWord":"[redacted]"}`},
		{"word at the end", `{"x":1,"sessionTOKEN":"t"}`, `{"sessionTOKEN":"[redacted]","x":1}`},
		{"a word's start at the end of the body", `{"name":"toke"}`, `{"name":"toke"}`},
		{"no word", `{"NAME":"GROUP","roles":["ADMIN"]}`, `{"NAME":"GROUP","roles":["ADMIN"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(apiserver.RedactBody([]byte(tc.in))))
		})
	}
	got := apiserver.RedactHeaders(http.Header{"X-Session-Token": {"t"}, "Accept": {"a", "b"}})
	assert.Equal(t, []string{apiserver.Redacted}, got["X-Session-Token"])
	assert.Equal(t, []string{"a", "b"}, got["Accept"])
}
