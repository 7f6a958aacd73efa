package har_test

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/har"
	"github.com/apistack/apistack/servers/internal/har/hartest"
)

func entry(i int) *har.Entry {
	return &har.Entry{
		StartedDateTime: har.DateTime(time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)),
		Time:            1.5,
		Request: har.Request{Method: "GET", URL: "http://127.0.0.1:8081/v1/teams/demo/groups?count=" + string(rune('0'+i)),
			HTTPVersion: "HTTP/1.1", Cookies: []har.Cookie{}, Headers: []har.NameValue{{Name: "Accept", Value: "*/*"}},
			QueryString: []har.NameValue{{Name: "count", Value: string(rune('0' + i))}}, HeadersSize: -1},
		Response: har.Response{Status: 200, StatusText: "OK", HTTPVersion: "HTTP/1.1", Cookies: []har.Cookie{},
			Headers: []har.NameValue{}, Content: har.Content{Size: 2, MimeType: "application/json", Text: "{}"}, HeadersSize: -1, BodySize: 2},
		Timings:   har.Timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 0, Wait: 1, Receive: 0.5},
		Operation: "ListGroups",
		Violations: []har.Violation{{Where: "response", Pointer: "/header/X-RateLimit-Limit",
			Message: `response header "X-RateLimit-Limit" missing`}},
	}
}

func TestWriter_ClosedFileIsAValidHARThatReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.har")
	w, err := har.Create(path, har.Log{Creator: har.Creator{Name: "test", Version: "1"}, BodyCap: 1024, Comment: "a test"})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); assert.NoError(t, w.Append(entry(i))) }()
	}
	wg.Wait()
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Append(entry(0)), har.ErrClosed)

	log := hartest.ReadFile(t, path)
	assert.Equal(t, "1.2", log.Version)
	assert.Equal(t, int64(1024), log.BodyCap)
	require.Len(t, log.Entries, 8)
	assert.Equal(t, "ListGroups", log.Entries[0].Operation)
	assert.Equal(t, entry(0).Violations, log.Entries[0].Violations)
}

func TestWriter_EmptyRecordingIsValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.har")
	w, err := har.Create(path, har.Log{Creator: har.Creator{Name: "test", Version: "1"}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Empty(t, hartest.ReadFile(t, path).Entries)
}

// A file cut anywhere inside its entries (its writer killed) reads as its
// whole entries, marked truncated; the schema check refuses it.
func TestRead_ToleratesAFileCutInsideItsEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.har")
	w, err := har.Create(path, har.Log{Creator: har.Creator{Name: "test", Version: "1"}})
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, w.Append(entry(i)))
	}
	unclosed, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	log, err := har.Read(bytes.NewReader(unclosed))
	require.NoError(t, err)
	assert.True(t, log.Truncated)
	assert.Len(t, log.Entries, 3, "every appended entry is whole on disk before Close")

	third := bytes.LastIndex(unclosed, []byte(`{"startedDateTime"`))
	for _, cut := range []int{third + 1, third + 40, len(unclosed) - 3} {
		log, err := har.Read(bytes.NewReader(unclosed[:cut]))
		require.NoError(t, err, "cut at %d", cut)
		assert.True(t, log.Truncated)
		assert.Len(t, log.Entries, 2, "cut at %d: the entry cut is the only one lost", cut)
	}
	assert.Error(t, hartest.Validate(unclosed[:third+40]))
}

func TestRead_RefusesWhatIsNoHAR(t *testing.T) {
	for _, doc := range []string{``, `[]`, `{"nolog":1}`, `{"log":{"version":"9.9","entries":[]}}`, `{"log":{"entries":{}}}`} {
		_, err := har.Read(strings.NewReader(doc))
		assert.ErrorIs(t, err, har.ErrNotHAR, "%q", doc)
	}
}

// A HAR of another recorder (members in another order, pages, browser
// pseudo-headers, base64 bodies, form params) reads.
func TestRead_AnotherRecordersFile(t *testing.T) {
	doc := `{"log":{"entries":[{"startedDateTime":"2026-01-02T03:04:05.000Z","time":1,"request":{"method":"POST","url":"https://x.example/v2/faxes",
"httpVersion":"h2","cookies":[],"headers":[{"name":":authority","value":"x.example"},{"name":"content-type","value":"application/x-www-form-urlencoded"}],
"queryString":[],"postData":{"mimeType":"application/x-www-form-urlencoded","params":[{"name":"to","value":"+13125550800"}]},"headersSize":-1,"bodySize":-1},
"response":{"status":200,"statusText":"","httpVersion":"h2","cookies":[],"headers":[],"content":{"size":3,"mimeType":"application/octet-stream","text":"AAEC","encoding":"base64"},
"redirectURL":"","headersSize":-1,"bodySize":-1},"cache":{},"timings":{"send":0,"wait":1,"receive":0}}],
"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"pages":[]}}`
	hartest.RequireValid(t, []byte(doc))
	log, err := har.Read(strings.NewReader(doc))
	require.NoError(t, err)
	require.Len(t, log.Entries, 1)
	e := log.Entries[0]
	body, err := e.Request.Body()
	require.NoError(t, err)
	assert.Equal(t, "to=%2B13125550800", string(body))
	assert.Empty(t, e.Request.Header().Get(":authority"), "pseudo-headers are no headers")
	resp, err := e.Response.Body()
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 2}, resp)
}

func TestRedaction_AsTheJournalRedacts(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer pat_x"}, "Webhook-Signature-Ed25519": {"c2ln"}, "Accept": {"*/*"}}
	assert.Equal(t, []har.NameValue{{Name: "Accept", Value: "*/*"}, {Name: "Authorization", Value: har.Redacted},
		{Name: "Webhook-Signature-Ed25519", Value: har.Redacted}}, har.Headers(h))

	u, err := url.Parse("http://bob:hunter2@x.example/b/k?X-Cloud-Signature=abc&count=2&access_token=t&count=3")
	require.NoError(t, err)
	red := har.RedactURL(u).String()
	assert.NotContains(t, red, "hunter2")
	assert.NotContains(t, red, "abc")
	assert.NotContains(t, red, "=t&")
	assert.Contains(t, red, "count=2&")
	assert.Contains(t, red, "count=3")
	assert.Equal(t, "http://bob:hunter2@x.example/b/k?X-Cloud-Signature=abc&count=2&access_token=t&count=3", u.String(), "the URL given is left alone")

	assert.JSONEq(t, `{"key_id":"k","key_secret":"[redacted]"}`, string(har.RedactBody([]byte(`{"key_id":"k","key_secret":"s"}`))))
}
