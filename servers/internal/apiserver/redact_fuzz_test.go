package apiserver_test

import (
	"encoding/json"
	"testing"

	"github.com/apistack/apistack/servers/internal/apiserver"
)

// credentialFields are the secrets of the credential exchanges, as the
// servers decode them (encoding/json: field names matched regardless of
// case and of how they are escaped).
type credentialFields struct {
	KeySecret    string `json:"key_secret"`
	ClientSecret string `json:"clientSecret"`
	Password     string `json:"password"`
}

// FuzzRedactBody: whatever the spelling of a body, a server decoding the
// redacted body gets none of the secrets it would decode from the body.
func FuzzRedactBody(f *testing.F) {
	for _, seed := range []string{
		`{"key_id":"k","key_secret":"s3cr3t"}`,
		`{"\u006bey_\u0073ecret":"s3cr3t"}`,
		`{"KEY_SECRET":"s3cr3t"}`,
		"{\"key_\u017fecret\":\"s3cr3t\"}",
		`{"clientId":"c","client\u0053ecret":"s3cr3t"}`,
		`{"a":[{"password":"p"}],"password":"s3cr3t"}`,
		`{"key_secret":{"nested":"s3cr3t"}}`,
		`[{"key_secret":"s3cr3t"}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var before credentialFields
		if json.Unmarshal(body, &before) != nil {
			return
		}
		out := apiserver.RedactBody(body)
		var after credentialFields
		if json.Unmarshal(out, &after) != nil {
			return // not a document a server would decode at all
		}
		for name, pair := range map[string][2]string{
			"key_secret": {before.KeySecret, after.KeySecret}, "clientSecret": {before.ClientSecret, after.ClientSecret},
			"password": {before.Password, after.Password},
		} {
			if pair[0] != "" && pair[0] != apiserver.Redacted && pair[1] == pair[0] {
				t.Fatalf("%s %q survives redaction of %q: %q", name, pair[0], body, out)
			}
		}
	})
}
