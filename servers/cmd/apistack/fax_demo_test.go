package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/stack"
)

// inboxList reads the admin port's webhook inbox with token.
func inboxList(t *testing.T, adminURL, token string) (int, []stack.InboxEvent) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, adminURL+faxInboxPath, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Events []stack.InboxEvent `json:"events"`
	}
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	}
	return resp.StatusCode, body.Events
}

func TestServeDemo_SendsThePrintedFaxOfflineAndItsEventsReachTheInbox(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "10ms")
	creds, stdout, stop := startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()
	fc, ac := creds["fax"], creds["admin"]

	// The printed send line names the admin port's sample PDF, not the internet.
	m := regexp.MustCompile(`'media_url=(\S+)'`).FindStringSubmatch(stdout.String())
	require.NotNil(t, m, stdout.String())
	mediaURL := m[1]
	assert.Equal(t, ac["base_url"]+faxSamplePath, mediaURL)
	assert.Contains(t, stdout.String(), ac["base_url"]+faxInboxPath)
	resp, err := http.Get(mediaURL)
	require.NoError(t, err)
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	pages, err := fax.CountPages(doc)
	require.NoError(t, err, "the sample is a PDF")
	assert.Equal(t, stack.FaxSamplePages, pages)

	// Send as the printed curl line does: a form with the demo key.
	form := url.Values{"media_url": {mediaURL}, "connection_id": {fc["connection_id"]}, "to": {"+13125550800"}, "from": {fc["from"]}}
	req, err := http.NewRequest(http.MethodPost, fc["base_url"]+"/v2/faxes", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+fc["api_key"])
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var sent struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sent))
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)

	var types []string
	require.Eventually(t, func() bool {
		_, events := inboxList(t, ac["base_url"], ac["token"])
		types = types[:0]
		for _, e := range events {
			if e.FaxID == sent.Data.ID {
				types = append(types, e.EventType)
			}
		}
		return len(types) > 0 && types[len(types)-1] == "fax.delivered"
	}, 20*time.Second, 20*time.Millisecond, "events of the fax: %v", types)
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, types)

	code, _ := inboxList(t, ac["base_url"], "wrong")
	assert.Equal(t, http.StatusUnauthorized, code, "the inbox lists events to the admin only")
}

func TestFaxInbox_RefusesUnsignedDeliveries(t *testing.T) {
	creds, _, stop := startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()
	body := []byte(`{"data":{"event_type":"fax.delivered"},"meta":{"attempt":1,"delivered_to":"x"}}`)
	for name, header := range map[string]map[string]string{
		"no signature":     {},
		"forged signature": {"Webhook-Timestamp": "1700000000", "Webhook-Signature-Ed25519": "AAAA"},
	} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, creds["admin"]["base_url"]+faxInboxPath, bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		})
	}
	_, events := inboxList(t, creds["admin"]["base_url"], creds["admin"]["token"])
	assert.Empty(t, events)
}

func TestAdminCommand_FaxCommandsInjectAnInboundFaxThatReachesTheInbox(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "10ms")
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	admin := adminRunner(t, dataDir)

	key := admin("fax-webhook-key")
	assert.Equal(t, creds["fax"]["webhook_public_key"], key["public_key"])

	acct := admin("fax-create-account", "acme")
	first := acct["api_key"].(map[string]any)
	assert.NotEmpty(t, first["key"])
	rotated := admin("fax-create-key", "acme", first["id"].(string))
	assert.Equal(t, first["id"], rotated["replaced"])
	assert.Empty(t, admin("fax-revoke-key", "acme", rotated["id"].(string)))
	err := adminCommand(context.Background(), []string{"--data-dir", dataDir, "fax-revoke-key", "acme", rotated["id"].(string)}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, "404", "a key is revoked once")

	num := admin("fax-set-number", "demo", "+13125550190", creds["fax"]["connection_id"])
	assert.Equal(t, creds["fax"]["connection_id"], num["application_id"])
	pdf, err := fax.SamplePDF(3)
	require.NoError(t, err)
	file := t.TempDir() + "/in.pdf"
	require.NoError(t, os.WriteFile(file, pdf, 0o600))
	in := admin("fax-inject", "--outcome", "partial", "+14155550123", "+13125550190", file)
	assert.Equal(t, float64(3), in["page_count"])
	assert.Equal(t, "partial", in["outcome"])

	var types []string
	require.Eventually(t, func() bool {
		_, events := inboxList(t, creds["admin"]["base_url"], creds["admin"]["token"])
		types = types[:0]
		for _, e := range events {
			if e.FaxID == in["fax_id"] {
				types = append(types, e.EventType)
			}
		}
		return len(types) == 3
	}, 20*time.Second, 20*time.Millisecond, "events of the inbound fax: %v", types)
	assert.Equal(t, []string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, types)
	require.Eventually(t, func() bool {
		return admin("fax-webhook-stats")["delivered"].(float64) >= 3
	}, 10*time.Second, 20*time.Millisecond)
}
