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
		{"cut JSON naming a secret", `{"key_secret":"s3c`, `{"key_secret":"[redacted]"`},
		{"cut JSON after a secret", `{"key_secret":"s3cr3t","name":"gro`, `{"key_secret":"[redacted]","name":`},
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
		{"word at the end", `{"x":1,"sessionTOKEN":"t"}`, `{"x":1,"sessionTOKEN":"[redacted]"}`},
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

// TestRedactBody_JudgesTheDecodedDocument: a secret field is found however
// its name is spelled on the wire, as long as the server decodes it to a
// secret's name: JSON escapes, Unicode letters that case-insensitive
// decoders fold to ASCII, a byte order mark, a form's percent escapes, a
// multipart form.
func TestRedactBody_JudgesTheDecodedDocument(t *testing.T) {
	const secret = "s3cr3t-VALUE"
	for _, tc := range []struct {
		name, in string
		keep     []string // what must still show
	}{
		{"escaped name", `{"\u006bey_id":"k1","\u006b\u0065y_\u0073ecret":"` + secret + `"}`, []string{`"key_id":"k1"`}},
		{"escaped client secret", `{"clientId":"c","client\u0053ecret":"` + secret + `","userAccessType":"PLATFORM_MACHINE_CLIENT"}`, []string{`"clientId":"c"`}},
		{"escaped value too", `{"key_secret":"\u0073` + secret + `"}`, nil},
		{"long s folds to s", `{"key_\u017fecret":"` + secret + `"}`, nil},
		{"long s as UTF-8", "{\"key_\u017fecret\":\"" + secret + "\"}", nil},
		{"Kelvin sign folds to k", "{\"\u212aey_secret\":\"" + secret + "\"}", nil},
		{"byte order mark", "\xEF\xBB\xBF" + `{"key_id":"k1","key_secret":"` + secret + `"}`, []string{`"key_id":"k1"`}},
		{"whitespace first", "\n\t " + `{"clientSecret":"` + secret + `"}`, nil},
		{"nested under an escaped name", `{"\u0074oken":{"accessToken":"` + secret + `"}}`, nil},
		{"duplicate fields", `{"key_secret":"a","key_secret":"` + secret + `"}`, nil},
		{"form", `key_id=k1&key_secret=` + secret, []string{"key_id=k1"}},
		{"form, escaped name", `key_id=k1&key%5F%73ecret=` + secret, []string{"key_id=k1"}},
		{"form, escaped client secret", `clientId=c&client%53ecret=` + secret, []string{"clientId=c"}},
		{"form after a byte order mark", "\xEF\xBB\xBFkey_secret=" + secret, nil},
		{"multipart", "--XyZ\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\n+13125550100\r\n" +
			"--XyZ\r\nContent-Disposition: form-data; name=\"api_\u212aey\"\r\n\r\n" + secret + "\r\n--XyZ--\r\n", []string{"+13125550100"}},
		{"JSON URL's password", `{"webhook_url":"https://hook:` + secret + `@example.com/in"}`, []string{"example.com/in"}},
		{"JSON URL's escaped slashes", `{"webhook_url":"https:\/\/hook:` + secret + `@example.com\/in"}`, []string{"example.com/in"}},
		{"JSON URL's token", `{"webhook_url":"https://example.com/in?tenant=7&token=` + secret + `"}`, []string{"tenant=7"}},
		{"JSON URL's sig", `{"media_url":"https://example.com/doc.pdf?sig=` + secret + `"}`, []string{"doc.pdf"}},
		{"form URL's password", `webhook_url=https%3A%2F%2Fhook%3A` + secret + `%40example.com%2Fin&to=%2B1`, []string{"to=%2B1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(apiserver.RedactBody([]byte(tc.in)))
			assert.NotContains(t, got, secret)
			assert.NotContains(t, got, "s3cr3t")
			for _, k := range tc.keep {
				assert.Contains(t, got, k)
			}
		})
	}
}

func TestRedactBody_LeavesOtherBodiesAlone(t *testing.T) {
	for _, in := range []string{
		`{"name":"group","roles":["pam_admin"]}`,
		`<LifecycleConfiguration><Rule><ID>r</ID></Rule></LifecycleConfiguration>`,
		`to=%2B13125550800&from=x`,
		`{"pageToken":"abc","key_id":"k1"}`,
	} {
		got := string(apiserver.RedactBody([]byte(in)))
		assert.Equal(t, in, got)
	}
}
