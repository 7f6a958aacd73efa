package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sendDemoFax sends a fax of mediaURL with the demo key and returns its
// failure reason once it is final ("" when delivered).
func sendDemoFax(t *testing.T, fc map[string]string, mediaURL string) string {
	t.Helper()
	form := url.Values{"media_url": {mediaURL}, "connection_id": {fc["connection_id"]}, "to": {"+13125550800"}, "from": {fc["from"]}}
	req, err := http.NewRequest(http.MethodPost, fc["base_url"]+"/v2/faxes", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+fc["api_key"])
	type faxBody struct {
		Data struct {
			ID            string `json:"id"`
			Status        string `json:"status"`
			FailureReason string `json:"failure_reason"`
		} `json:"data"`
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var sent faxBody
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sent))
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	var got faxBody
	require.Eventually(t, func() bool {
		req, err := http.NewRequest(http.MethodGet, fc["base_url"]+"/v2/faxes/"+sent.Data.ID, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+fc["api_key"])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
		return got.Data.Status == "delivered" || got.Data.Status == "failed"
	}, 20*time.Second, 10*time.Millisecond)
	return got.Data.FailureReason
}

func TestServe_FaxReachesOnlyTheDemoURLsOfLoopbackUnlessPrivateDestinationsAreAllowed(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "1ms")
	creds, _, stop := startServe(t, t.TempDir())
	fc, ac := creds["fax"], creds["admin"]
	assert.Empty(t, sendDemoFax(t, fc, ac["base_url"]+faxSamplePath), "the demo's sample is allowed")
	// Another document of the admin port: refused, told apart from nothing.
	assert.Equal(t, "file_download_failed", sendDemoFax(t, fc, ac["base_url"]+"/openapi.yaml"))
	require.NoError(t, stop())

	t.Setenv("APISTACK_FAX_ALLOW_PRIVATE_DESTINATIONS", "true")
	creds, _, stop = startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()
	fc, ac = creds["fax"], creds["admin"]
	assert.Equal(t, "file_format_invalid", sendDemoFax(t, fc, ac["base_url"]+"/openapi.yaml"),
		"with the flag, loopback is reached (and the spec is no PDF)")
}
