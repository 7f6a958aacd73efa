package redact_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/servers/internal/redact"
)

func TestURL_HidesUserInfoAndSecretLookingQueryValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://user:pa55@hooks.example.com/in", "https://redacted@hooks.example.com/in"},
		{"https://hooks.example.com/in?tenant=7&token=t0k", "https://hooks.example.com/in?tenant=7&token=redacted"},
		{"https://hooks.example.com/in?X-Amz-Signature=abc&sig=def&api_key=k&code=c&x=1", "https://hooks.example.com/in?X-Amz-Signature=redacted&sig=redacted&api_key=redacted&code=redacted&x=1"},
		{"https://hooks.example.com/in?%74oken=t0k", "https://hooks.example.com/in?%74oken=redacted"},
		{"https://hooks.example.com/in?pageToken=abc&key_id=k1", "https://hooks.example.com/in?pageToken=abc&key_id=k1"},
		{"https://hooks.example.com/in#secret", "https://hooks.example.com/in"},
		{"https://hooks.example.com/in", "https://hooks.example.com/in"},
		{"not a URL", "not a URL"},
		{"http://[::1", "(unparseable URL)"},
	} {
		assert.Equal(t, tc.want, redact.URL(tc.in), tc.in)
	}
}

func TestSecretParam_FoldsLettersAsDecodersDo(t *testing.T) {
	for _, name := range []string{"key_secret", "KEY_SECRET", "key_ſecret", "\u212aey", "clientSecret", "passwd", "Authorization"} {
		assert.True(t, redact.SecretParam(name), name)
	}
	for _, name := range []string{"key_id", "tenant", "to", "from", "pageToken", "media_url"} {
		assert.False(t, redact.SecretParam(name), name)
	}
}
