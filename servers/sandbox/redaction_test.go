package sandbox_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/sandboxapi"
)

// TestJournal_RedactsSecretsHoweverTheyAreSpelled sends the sandbox's real
// secrets spelled every way the APIs decode them (JSON escapes, letters
// that fold to ASCII, a byte order mark, a form), and a webhook URL with a
// password and a token, and finds none of them in the journal.
func TestJournal_RedactsSecretsHoweverTheyAreSpelled(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	p, r := b.Credentials.Pam, b.Credentials.Restaurant
	// escape spells every letter of s as a JSON \u escape.
	escape := func(s string) string {
		var out strings.Builder
		for _, c := range s {
			out.WriteString(`\u00` + hex2(byte(c)))
		}
		return out.String()
	}
	post := func(url, contentType, body string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	tokenURL := p.BaseUrl + "/v1/teams/" + p.Team + "/service_token"
	loginURL := r.BaseUrl + "/authentication/v1/authentication/login"
	const bom = "\xEF\xBB\xBF"
	accepted := 0
	for _, tc := range []struct {
		name, url, contentType, body string
		accepted                     bool // the server logs the caller in
	}{
		{"escaped names", tokenURL, "application/json",
			`{"\u006bey_id":"` + p.KeyId + `","\u006b\u0065y_\u0073ecret":"` + p.KeySecret + `"}`, true},
		{"escaped name and value", tokenURL, "application/json",
			`{"key_id":"` + p.KeyId + `","` + escape("key_secret") + `":"` + escape(p.KeySecret) + `"}`, true},
		{"long s", tokenURL, "application/json", `{"key_id":"` + p.KeyId + `","key_ſecret":"` + p.KeySecret + `"}`, false},
		{"byte order mark", tokenURL, "application/json", bom + `{"key_id":"` + p.KeyId + `","key_secret":"` + p.KeySecret + `"}`, false},
		{"form", tokenURL, "application/x-www-form-urlencoded", "key_id=" + p.KeyId + "&key%5Fsecret=" + p.KeySecret, false},
		{"restaurant, escaped", loginURL, "application/json", `{"clientId":"` + r.ClientId + `","client\u0053ecret":"` + r.ClientSecret +
			`","userAccessType":"PLATFORM_MACHINE_CLIENT"}`, true},
		{"restaurant, Kelvin sign", loginURL, "application/json", `{"clientId":"` + r.ClientId + `","clientSecret":"` + r.ClientSecret +
			`","userAccessType":"PLATFORM_MACHINE_CLIENT","\u212aey":"` + r.ClientSecret + `"}`, false},
	} {
		status := post(tc.url, tc.contentType, tc.body)
		if tc.accepted {
			assert.Equal(t, http.StatusOK, status, tc.name)
			accepted++
		}
	}
	// A webhook URL with a password and a token, set through the fax API.
	const hookPassword, hookToken = "hook-pa55word", "hook-t0ken-value"
	hook := "https://user:" + hookPassword + "@93.184.215.14/in?tenant=7&token=" + hookToken
	_, err := b.fax.UpdateApplication(ctx, b.Credentials.Fax.ConnectionId, faxapi.UpdateFaxApplicationJSONRequestBody{WebhookUrl: &hook})
	require.NoError(t, err)

	entries := journal(t, b, nil)
	require.NotEmpty(t, entries)
	var logins, updates int
	for _, en := range entries {
		for _, secret := range []string{p.KeySecret, r.ClientSecret, hookPassword, hookToken} {
			assert.NotContains(t, en.RequestBody, secret, "%s %s", en.Method, en.Path)
			assert.NotContains(t, en.ResponseBody, secret, "%s %s", en.Method, en.Path)
			assert.NotContains(t, deref(en.Query), secret, "%s %s", en.Method, en.Path)
		}
		if en.Operation == "IssueServiceToken" || strings.HasSuffix(en.Path, "/login") {
			logins++
		}
		if en.Operation == "UpdateFaxApplication" {
			updates++
			assert.Contains(t, en.RequestBody, "93.184.215.14/in", "the URL still says where it points")
			assert.Contains(t, en.RequestBody, "tenant=7")
		}
	}
	assert.GreaterOrEqual(t, logins, accepted, "every login is journaled (a refused one is no sandbox's)")
	assert.Equal(t, 1, updates)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
