package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/testkit"
)

// faxCall makes a request of the demo fax account's API with its key (a
// body of contentType when body is not nil) and returns the answer's status
// and body.
func faxCall(t *testing.T, fc map[string]string, method, path, contentType string, body io.Reader) (int, []byte) {
	t.Helper()
	resp, raw := testkit.Request{Method: method, URL: fc["base_url"] + path, Token: fc["api_key"], Body: body, ContentType: contentType}.Do(t)
	return resp.StatusCode, raw
}

// postDemoFax sends a fax of mediaURL as the demo's printed curl line does
// (a form, with the demo key) and returns the status and body of the answer.
func postDemoFax(t *testing.T, fc map[string]string, mediaURL string) (int, []byte) {
	t.Helper()
	form := url.Values{"media_url": {mediaURL}, "connection_id": {fc["connection_id"]}, "to": {"+13125550800"}, "from": {fc["from"]}}
	return faxCall(t, fc, http.MethodPost, "/v2/faxes", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

// sendDemoFax sends a fax of mediaURL with the demo key and returns its
// failure reason once it is final ("" when delivered).
func sendDemoFax(t *testing.T, fc map[string]string, mediaURL string) string {
	t.Helper()
	type faxBody struct {
		Data struct {
			ID            string `json:"id"`
			Status        string `json:"status"`
			FailureReason string `json:"failure_reason"`
		} `json:"data"`
	}
	status, raw := postDemoFax(t, fc, mediaURL)
	var sent faxBody
	require.NoError(t, json.Unmarshal(raw, &sent))
	require.Equal(t, http.StatusAccepted, status)
	var got faxBody
	require.Eventually(t, func() bool {
		_, raw := faxCall(t, fc, http.MethodGet, "/v2/faxes/"+sent.Data.ID, "", nil)
		require.NoError(t, json.Unmarshal(raw, &got))
		return got.Data.Status == "delivered" || got.Data.Status == "failed"
	}, 20*time.Second, 10*time.Millisecond)
	return got.Data.FailureReason
}

func TestServe_ALocalStackReachesLoopbackWithNoFlag(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "1ms")
	creds, _, stop := startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()
	fc, ac := creds["fax"], creds["admin"]
	assert.Empty(t, sendDemoFax(t, fc, ac["base_url"]+faxSamplePath), "the demo's sample")
	assert.Equal(t, "file_format_invalid", sendDemoFax(t, fc, ac["base_url"]+"/openapi.yaml"),
		"every port on loopback and no --database: loopback is reached (and the spec is no PDF)")
	status, body := postDemoFax(t, fc, "http://169.254.169.254/latest/meta-data/")
	assert.Equal(t, http.StatusUnprocessableEntity, status, "cloud metadata, never")
	assert.Contains(t, string(body), "/media_url")
}

func TestServe_AStackOffLoopbackReachesOnlyTheDemoURLsOfLoopbackUnlessAllowed(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "1ms")
	// The fax port on every interface: the stack is not local.
	creds, _, stop := startServe(t, t.TempDir(), "--fax-addr", "0.0.0.0:0")
	fc, ac := creds["fax"], creds["admin"]
	assert.Empty(t, sendDemoFax(t, fc, ac["base_url"]+faxSamplePath), "the demo's sample is allowed")
	// Another document of the admin port: refused when sent, naming the
	// field and the flag that would open it.
	adminHost := strings.TrimPrefix(ac["base_url"], "http://")
	status, body := postDemoFax(t, fc, ac["base_url"]+"/openapi.yaml")
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Contains(t, string(body), "/media_url")
	assert.Contains(t, string(body), "--fax-allow-destination "+adminHost)
	require.NoError(t, stop())

	creds, _, stop = startServe(t, t.TempDir(), "--fax-addr", "0.0.0.0:0", "--fax-allow-private-destinations")
	fc, ac = creds["fax"], creds["admin"]
	assert.Equal(t, "file_format_invalid", sendDemoFax(t, fc, ac["base_url"]+"/openapi.yaml"),
		"with --fax-allow-private-destinations, loopback is reached (and the spec is no PDF)")
	require.NoError(t, stop())
}

func TestLocalStack(t *testing.T) {
	listen := func(addr string) listener {
		ln, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		return listener{name: addr, ln: ln}
	}
	loop, loop6, any := listen("127.0.0.1:0"), listen("127.0.0.1:0"), listen("0.0.0.0:0")
	assert.True(t, localStack([]listener{loop, loop6}, ""))
	assert.False(t, localStack([]listener{loop, loop6}, "postgres://db/x"), "a shared database")
	assert.False(t, localStack([]listener{loop, any}, ""), "a port on every interface")
	assert.False(t, localStack(nil, ""))
}

func TestServeFlags_AllowDestination(t *testing.T) {
	c, err := parseServeFlags([]string{"--fax-allow-destination", "hooks.internal:8443", "--fax-allow-destination", "10.0.0.5:80, docs:443"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, hostPorts{"hooks.internal:8443", "10.0.0.5:80", "docs:443"}, c.Destinations.Allow)
	_, err = parseServeFlags([]string{"--fax-allow-destination", "no-port"}, io.Discard)
	assert.Error(t, err)
}
