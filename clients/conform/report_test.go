package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReport_ExitCodeAndSummary(t *testing.T) {
	pass := Result{API: PAM, Check: "a", Passed: true}
	fail := Result{API: PAM, Check: "b", Detail: "want 404, got 200"}
	tests := []struct {
		name     string
		results  []Result
		exit     int
		summary  string
		passed   int
		failures int
	}{
		{"every check passed", []Result{pass, pass}, 0, "2 passed, 0 failed", 2, 0},
		{"one check failed", []Result{pass, fail, pass}, 1, "2 passed, 1 failed", 2, 1},
		{"every check failed", []Result{fail}, 1, "0 passed, 1 failed", 0, 1},
		{"no check ran", nil, 1, "0 passed, 0 failed", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Report{Results: tt.results}
			assert.Equal(t, tt.exit, r.ExitCode())
			assert.Equal(t, tt.summary, r.Summary())
			assert.Equal(t, tt.passed, r.Passed())
			assert.Equal(t, tt.failures, r.Failed())
		})
	}
}

func TestReport_WriteTableAlignsColumnsAndEndsWithTheSummary(t *testing.T) {
	r := Report{Results: []Result{
		{API: Storage, Check: "signature-wrong-secret", Passed: true, Detail: "403 SignatureDoesNotMatch", Duration: 3 * time.Millisecond},
		{API: Storage, Check: "malformed-xml", Detail: "want 400 MalformedXML, got 200", Duration: 1500 * time.Microsecond},
	}}
	var out bytes.Buffer
	require.NoError(t, r.WriteTable(&out))
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, []string{"CHECK", "RESULT", "TIME", "DETAIL"}, strings.Fields(lines[0]))
	assert.Equal(t, "storage/signature-wrong-secret  PASS    3ms   403 SignatureDoesNotMatch", lines[1])
	assert.Equal(t, "storage/malformed-xml           FAIL    2ms   want 400 MalformedXML, got 200", lines[2])
	// Every column starts at the same offset on every row.
	for _, col := range []string{"RESULT", "TIME", "DETAIL"} {
		at := strings.Index(lines[0], col)
		assert.Contains(t, []string{"PASS", "FAIL", "3ms ", "2ms ", "403 ", "want"}, lines[1][at:at+4], col)
		assert.Contains(t, []string{"PASS", "FAIL", "3ms ", "2ms ", "403 ", "want"}, lines[2][at:at+4], col)
	}
	assert.Equal(t, "1 passed, 1 failed", lines[3])
}

func TestReport_WriteJSON(t *testing.T) {
	r := Report{Results: []Result{
		{API: Fax, Check: "authentication", Passed: true, Detail: "401", Duration: 42 * time.Millisecond},
		{API: Fax, Check: "webhook-signatures", Detail: "no webhook delivery"},
	}}
	var out bytes.Buffer
	require.NoError(t, r.WriteJSON(&out))
	var doc struct {
		Results []map[string]any `json:"results"`
		Passed  int              `json:"passed"`
		Failed  int              `json:"failed"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	assert.Equal(t, 1, doc.Passed)
	assert.Equal(t, 1, doc.Failed)
	require.Len(t, doc.Results, 2)
	assert.Equal(t, map[string]any{"api": "fax", "check": "authentication", "passed": true, "detail": "401", "duration_ms": float64(42)}, doc.Results[0])
	assert.Equal(t, false, doc.Results[1]["passed"])

	out.Reset()
	require.NoError(t, Report{}.WriteJSON(&out))
	assert.Contains(t, out.String(), `"results": []`, "an empty run is an empty list, not null")
}

func TestOneLine_FoldsMultiLineExplanations(t *testing.T) {
	assert.Equal(t, "a | b c | d", oneLine("a\n\n  b   c\r\nd\n"))
	assert.Equal(t, "single", oneLine("single"))
}

func TestRun_ASetupErrorIsOneFailedCheck(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		detail string
	}{
		{"no section for the API", Config{API: PAM}, "no pam section"},
		{"a base URL that is not http", Config{API: Restaurant, BaseURL: "ftp://x", Credentials: Credentials{Restaurant: &RestaurantCredentials{ClientID: "a", ClientSecret: "b", RestaurantGUID: "c"}}}, "not an http(s) URL"},
		{"a section missing a key", Config{API: Storage, Credentials: Credentials{Storage: &StorageCredentials{Endpoint: "http://127.0.0.1:1"}}}, "needs region"},
		{"a bad webhook key", Config{API: Fax, Credentials: Credentials{Fax: &FaxCredentials{BaseURL: "http://127.0.0.1:1", APIKey: "k", ConnectionID: "c", From: "+13125550100", WebhookPublicKey: "short"}}}, "webhook_public_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run(context.Background(), tt.cfg)
			require.Len(t, r.Results, 1)
			assert.Equal(t, "setup", r.Results[0].Check)
			assert.False(t, r.Results[0].Passed)
			assert.Contains(t, r.Results[0].Detail, tt.detail)
			assert.Equal(t, 1, r.ExitCode())
		})
	}
}

// xmlDecoderAtStart is the application/xml decoder registered once every
// package linked into this binary was initialized, before any test ran.
var xmlDecoderAtStart = openapi3filter.RegisteredBodyDecoder("application/xml")

// The storage checks register the decoder of the API's XML bodies
// themselves (through protocol/contract): nothing linked into this binary
// registered one by being linked in, and the checks run past their setup.
func TestRun_StorageRegistersItsXMLBodyDecoder(t *testing.T) {
	require.Nil(t, xmlDecoderAtStart, "no package registers a decoder by being linked in")
	r := Run(context.Background(), Config{API: Storage, Timeout: 5 * time.Second, Credentials: Credentials{Storage: &StorageCredentials{
		Endpoint: "http://127.0.0.1:1", Region: "local-1", KeyID: "k", Secret: "s", Bucket: "b"}}})
	assert.NotNil(t, openapi3filter.RegisteredBodyDecoder("application/xml"))
	require.Greater(t, len(r.Results), 1, "the checks ran")
	for _, res := range r.Results {
		assert.NotEqual(t, "setup", res.Check)
	}
}

func TestRun_AnUnreachableImplementationFailsEveryCheckNamingTheOperation(t *testing.T) {
	r := Run(context.Background(), Config{API: PAM, Timeout: 5 * time.Second, Credentials: Credentials{PAM: &PAMCredentials{
		BaseURL: "http://127.0.0.1:1", Team: "demo", KeyID: "k", KeySecret: "s"}}})
	require.Len(t, r.Results, 8)
	for _, res := range r.Results {
		assert.False(t, res.Passed, res.Check)
		assert.Regexp(t, `^[A-Z]\w+[^(]* \((GET|POST) /v1/teams/demo/[a-z_]+\): .*connection refused`, res.Detail, res.Check)
	}
}

func TestReadCredentials(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "creds.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"pam":{"base_url":"http://h:1","team":"t","key_id":"i","key_secret":"s"},
		"storage":{"endpoint":"http://h:3","region":"r","key_id":"k","secret":"x","bucket":"b","versioned_bucket":"v"},
		"admin":{"base_url":"http://h:9","token":"ignored"}}`), 0o600))
	c, err := ReadCredentials(path)
	require.NoError(t, err)
	assert.Equal(t, &PAMCredentials{BaseURL: "http://h:1", Team: "t", KeyID: "i", KeySecret: "s"}, c.PAM)
	assert.Equal(t, "v", c.Storage.VersionedBucket)
	assert.Nil(t, c.Fax)

	_, err = ReadCredentials(filepath.Join(dir, "missing.json"))
	assert.ErrorContains(t, err, "read credentials")
	require.NoError(t, os.WriteFile(path, []byte(`{`), 0o600))
	_, err = ReadCredentials(path)
	assert.ErrorContains(t, err, "creds.json")
}

func TestParseAPI(t *testing.T) {
	for _, a := range APIs {
		got, err := ParseAPI(string(a))
		require.NoError(t, err)
		assert.Equal(t, a, got)
	}
	_, err := ParseAPI("admin")
	assert.ErrorContains(t, err, "unknown API \"admin\"")
}

func TestSnippet_RedactsCredentials(t *testing.T) {
	body := []byte(`{"bearer_token":"tok-123","team_name":"demo","token":{"accessToken": "abc","expiresIn":3600},"key_secret":"s3","api_key":"k","name":"x"}`)
	got := snippet(body)
	for _, secret := range []string{"tok-123", `"abc"`, `"s3"`, `"k"`} {
		assert.NotContains(t, got, secret)
	}
	assert.Contains(t, got, `"bearer_token":"(redacted)"`)
	assert.Contains(t, got, `"team_name":"demo"`, "other fields stay")
	assert.Contains(t, got, `"name":"x"`)
	assert.Equal(t, "(empty body)", snippet(nil))
	assert.Len(t, []rune(snippet(bytes.Repeat([]byte("a"), 500))), 201, "long bodies are cut")
}
