package drift_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/conform"
	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/drift"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy/harproxytest"
	"github.com/apistack/apistack/servers/internal/har"
)

func entry(method, url string, status int, body string, header ...har.NameValue) har.Entry {
	return har.Entry{
		StartedDateTime: "2026-01-02T03:04:05.000000Z",
		Request: har.Request{Method: method, URL: url, HTTPVersion: "HTTP/1.1",
			Headers: []har.NameValue{{Name: "Authorization", Value: har.Redacted}}},
		Response: har.Response{Status: status, Headers: append(header, har.NameValue{Name: "Content-Type", Value: "application/json"}),
			Content: har.Content{MimeType: "application/json", Text: body, Size: int64(len(body))}},
	}
}

// A recording of another team, from a browser (an entry of no PAM
// operation among them), replayed with the credentials file's team and
// key against a service whose answers drift: each drifting field named.
func TestRun_NamesEachDriftingFieldAndSkipsWhatIsNotTheAPIs(t *testing.T) {
	target := httptest.NewServer(&harproxytest.DeviatingPAM{})
	t.Cleanup(target.Close)
	limit := []har.NameValue{{Name: "X-RateLimit-Limit", Value: "10"}, {Name: "X-RateLimit-Remaining", Value: "9"},
		{Name: "X-RateLimit-Reset", Value: "1"}, {Name: "X-RateLimit-Retry-At", Value: "1"}}
	log := &har.Log{Entries: []har.Entry{
		entry("GET", "https://pam.example/favicon.ico", 200, ""),
		entry("GET", "https://pam.example/v1/teams/recorded-team/groups", 200,
			`{"list":[{"id":"6f1c3a52-8a57-4a39-9ad3-2f4f1f3c5a10","name":"demo-admins","roles":["pam_admin"],"deleted_at":null}]}`, limit...),
		entry("GET", "https://pam.example/v1/teams/recorded-team/groups/demo-admins", 200,
			`{"id":"7f1c3a52-8a57-4a39-9ad3-2f4f1f3c5a10","name":"demo-admins","roles":["pam_admin"],"deleted_at":"2026-01-01T00:00:00Z"}`, limit...),
	}}
	res, err := drift.Run(t.Context(), drift.Config{API: contract.PAM, Log: log, Target: target.URL,
		Credentials: conform.Credentials{PAM: &conform.PAMCredentials{Team: "demo", KeyID: "k", KeySecret: "s"}}})
	require.NoError(t, err)
	var lines []string
	for _, d := range res.Differences {
		lines = append(lines, d.String())
	}
	assert.Equal(t, []string{
		"entry 1 ListGroups: header X-RateLimit-Limit: missing from the target",
		"entry 1 ListGroups: /list/*/colour: present in the target only",
		"entry 1 ListGroups: /list/*/roles: type: recorded array, target string",
	}, lines, "ids and a nullable timestamp that differ in value are no drift")
	assert.Equal(t, 2, res.Replayed)
	require.Len(t, res.Skipped, 1)
	assert.Contains(t, res.Skipped[0], "favicon.ico")
	assert.Equal(t, "2 entries replayed, 1 skipped, 3 differences", res.Summary())
}

func TestRun_RefusesABadTargetOrAMissingSection(t *testing.T) {
	_, err := drift.Run(t.Context(), drift.Config{API: contract.PAM, Log: &har.Log{}, Target: "ftp://x"})
	assert.Error(t, err)
	_, err = drift.Run(t.Context(), drift.Config{API: contract.PAM, Log: &har.Log{}, Target: "http://127.0.0.1:1"})
	assert.ErrorContains(t, err, "no pam section")
}
