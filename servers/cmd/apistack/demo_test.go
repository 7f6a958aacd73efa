package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/stack"
)

// bannerCurl is one curl line of the demo banner: "  send:    curl …".
var bannerCurl = regexp.MustCompile(`(?m)^  ([a-z]+):\s+(curl .*)$`)

// pasted runs line in bash in dir as a user pasting it would, and returns
// what it wrote.
func pasted(t *testing.T, dir, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", line, out)
	return string(out)
}

// TestServeDemo_EveryBannerCurlLineWorksWhenPasted starts `serve --demo` as
// `make run` does (data in ./data) and runs every curl line of its banner in
// bash, from the same directory, judging each answer. A line added to the
// banner without a check here fails the test.
func TestServeDemo_EveryBannerCurlLineWorksWhenPasted(t *testing.T) {
	testkit.Tools(t, "bash", "curl", "sha256sum", "sed")
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "20ms")
	dir := t.TempDir()
	t.Chdir(dir)
	_, stdout, stop := startServe(t, "data")
	defer func() { require.NoError(t, stop()) }()
	rules := filepath.Join("data", demoRulesFile)
	assert.Contains(t, stdout.String(), "'@"+rules+"'", "the put line sends the document the demo wrote")
	_, err := os.Stat(rules)
	require.NoError(t, err, "the demo writes the document the put line names")

	runBannerLines(t, dir, stdout.String())
}

// runBannerLines runs every curl line of a demo banner in bash from dir, as
// a reader pastes them in order, and judges each answer. A line added to the
// banner without a check here fails the test.
func runBannerLines(t *testing.T, dir, banner string) {
	t.Helper()
	jsonOf := func(t *testing.T, out string) map[string]any {
		t.Helper()
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		return v
	}
	checks := map[string]func(t *testing.T, line, out string){
		"token": func(t *testing.T, _, out string) { assert.NotEmpty(t, jsonOf(t, out)["bearer_token"]) },
		"groups": func(t *testing.T, _, out string) {
			assert.Contains(t, out, `"demo-admins"`)
		},
		"send": func(t *testing.T, _, out string) {
			data, _ := jsonOf(t, out)["data"].(map[string]any)
			assert.Equal(t, "queued", data["status"], out)
		},
		"list": func(t *testing.T, _, out string) {
			data, _ := jsonOf(t, out)["data"].([]any)
			assert.NotEmpty(t, data, "the fax just sent is listed: %s", out)
		},
		"webhooks": func(t *testing.T, line, out string) {
			// The fax sent above reaches delivered in a few steps, each
			// event delivered to the inbox this line reads.
			require.Eventually(t, func() bool {
				return strings.Contains(pasted(t, dir, line), "fax.delivered")
			}, 30*time.Second, 50*time.Millisecond, "the inbox receives the sent fax's events: %s", out)
		},
		"login": func(t *testing.T, _, out string) {
			tok, _ := jsonOf(t, out)["token"].(map[string]any)
			assert.NotEmpty(t, tok["accessToken"], out)
		},
		"menus": func(t *testing.T, _, out string) {
			var menus []map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &menus), out)
			assert.NotEmpty(t, menus)
		},
		"put": func(t *testing.T, _, out string) {
			assert.Empty(t, out, "200 with no body; an error is an XML <Error>")
		},
		"get": func(t *testing.T, _, out string) {
			assert.Contains(t, out, "<ID>expire-logs</ID>", "the rules put above come back")
			assert.Contains(t, out, "<ID>abort-uploads</ID>")
		},
		"teams": func(t *testing.T, _, out string) { assert.Equal(t, "demo", jsonOf(t, out)["name"]) },
	}
	lines := bannerCurl.FindAllStringSubmatch(banner, -1)
	var seen []string
	for _, m := range lines {
		label, line := m[1], m[2]
		seen = append(seen, label)
		check, ok := checks[label]
		if !assert.True(t, ok, "banner line %q has no check in this test", label) {
			continue
		}
		t.Run(label, func(t *testing.T) { check(t, line, pasted(t, dir, line)) })
	}
	assert.ElementsMatch(t, []string{"token", "groups", "send", "list", "webhooks", "login", "menus", "put", "get", "teams"}, seen,
		"every API's lines are printed:\n%s", banner)
}

// TestServeDemo_MetricsOnTheAdminPortCountEveryAPI makes requests to the
// running stack and reads them back from the admin port's /metrics.
func TestServeDemo_MetricsOnTheAdminPortCountEveryAPI(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "10ms")
	creds, _, stop := startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()

	p := creds["pam"]
	body := `{"key_id":"` + p["key_id"] + `","key_secret":"` + p["key_secret"] + `"}`
	resp, err := http.Post(p["base_url"]+"/v1/teams/"+p["team"]+"/service_token", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Get(creds["fax"]["base_url"] + "/v2/faxes")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	f, err := telemetrytest.Scrape(ctx, http.DefaultClient, creds["admin"]["base_url"]+"/metrics", nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, f.Value("apistack_http_requests_total", map[string]string{"api": "pam", "operation": "IssueServiceToken", "status": "200"}))
	assert.Equal(t, 1.0, f.Value("apistack_http_requests_total", map[string]string{"api": "fax", "operation": "ListFaxes", "status": "401"}))
	assert.Contains(t, f, "apistack_fax_webhook_outbox_depth")

	// Every port's docs page loads the spec with the port itself as its server.
	for _, api := range []string{"pam", "fax", "storage", "restaurant", "admin"} {
		base := creds[api]["base_url"]
		if base == "" {
			base = creds[api]["endpoint"]
		}
		resp, err := http.Get(base + "/docs/openapi.yaml")
		require.NoError(t, err, api)
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, api)
		doc, err := openapi3.NewLoader().LoadFromData(data)
		require.NoError(t, err, api)
		require.NotEmpty(t, doc.Servers, api)
		for _, s := range doc.Servers {
			assert.Equal(t, "/", s.URL, "%s: Try it out calls the port serving the page", api)
		}
	}
}

// inboxList reads the admin port's webhook inbox with token.
func inboxList(t *testing.T, adminURL, token string) (int, []stack.InboxEvent) {
	t.Helper()
	resp, raw := testkit.Request{Method: http.MethodGet, URL: adminURL + faxInboxPath, Token: token}.Do(t)
	var body struct {
		Events []stack.InboxEvent `json:"events"`
	}
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(raw, &body))
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
	status, raw := postDemoFax(t, fc, mediaURL)
	var sent struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &sent))
	require.Equal(t, http.StatusAccepted, status)

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

func storageClient(t *testing.T, creds map[string]string) *storage.Client {
	t.Helper()
	c, err := storage.New(storage.Config{Endpoint: creds["endpoint"], Region: creds["region"], KeyID: creds["key_id"], Secret: creds["secret"]})
	require.NoError(t, err)
	return c
}

func TestServeDemo_StorageCredentialsSignAndSurviveARestart(t *testing.T) {
	dataDir := t.TempDir()
	creds, stdout, stop := startServe(t, dataDir)
	sc, ok := creds["storage"]
	require.True(t, ok, "the storage section is written")
	assert.Contains(t, stdout.String(), "--aws-sigv4 'cloud:cloud:"+sc["region"]+":s3'")
	ctx := context.Background()

	c := storageClient(t, sc)
	require.NoError(t, c.PutLifecycle(ctx, sc["bucket"], storage.Configuration(storage.ExpireAfterDays("logs", "logs/", 30))))
	require.NoError(t, c.PutLifecycle(ctx, sc["versioned_bucket"], storage.Configuration(storage.ExpireNoncurrentAfterDays("old", "", 30, 0))))
	require.NoError(t, stop())

	again, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	for _, k := range []string{"key_id", "secret", "bucket", "versioned_bucket", "region"} {
		assert.Equal(t, sc[k], again["storage"][k], "a restart keeps the buckets and the key: %s", k)
	}
	got, err := storageClient(t, again["storage"]).GetLifecycle(ctx, sc["bucket"])
	require.NoError(t, err)
	require.Len(t, got.Rules, 1)
	assert.Equal(t, "logs", *got.Rules[0].ID)
}

// adminRunner runs `apistack admin --data-dir dataDir ARGS...` in the test's
// process and returns its JSON answer (nil when it printed nothing); an
// error fails the test.
func adminRunner(t *testing.T, dataDir string) func(args ...string) map[string]any {
	return func(args ...string) map[string]any {
		t.Helper()
		var out bytes.Buffer
		require.NoError(t, adminCommand(context.Background(), append([]string{"--data-dir", dataDir}, args...), &out, io.Discard))
		var v map[string]any
		if out.Len() > 0 {
			require.NoError(t, json.Unmarshal(out.Bytes(), &v), out.String())
		}
		return v
	}
}

func TestAdminStorageCommands_ManageBucketsAndKeys(t *testing.T) {
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	run := adminRunner(t, dataDir)
	assert.Equal(t, "Enabled", run("storage-create-bucket", "--versioned", "backups")["versioning"])
	assert.Equal(t, "Suspended", run("storage-set-versioning", "backups", "Suspended")["versioning"])
	assert.Len(t, run("storage-list-buckets")["buckets"], 3)
	key := run("storage-create-key", "backup job")
	assert.Len(t, run("storage-list-keys")["keys"], 2)

	c := storageClient(t, map[string]string{"endpoint": creds["storage"]["endpoint"], "region": creds["storage"]["region"],
		"key_id": key["key_id"].(string), "secret": key["secret"].(string)})
	require.NoError(t, c.PutLifecycle(context.Background(), "backups", storage.Configuration(storage.ExpireNoncurrentAfterDays("old", "", 7, 0))))

	// A key of another account may not touch the default account's bucket,
	// nor learn that it exists.
	other := run("storage-create-key", "--account", "tenant-b", "tenant b")
	assert.Equal(t, "tenant-b", other["account"])
	oc := storageClient(t, map[string]string{"endpoint": creds["storage"]["endpoint"], "region": creds["storage"]["region"],
		"key_id": other["key_id"].(string), "secret": other["secret"].(string)})
	err := oc.PutLifecycle(context.Background(), "backups", storage.Configuration(storage.ExpireNoncurrentAfterDays("x", "", 1, 0)))
	var se *storage.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, storage.ErrorCodeNoSuchBucket, se.Code)
	own := run("storage-create-bucket", "--account", "tenant-b", "tenant-b-logs")
	assert.Equal(t, "tenant-b", own["account"])
	require.NoError(t, oc.PutLifecycle(context.Background(), "tenant-b-logs", storage.Configuration(storage.ExpireAfterDays("logs", "", 1))))
	run("storage-delete-bucket", "tenant-b-logs")
	run("storage-delete-key", other["key_id"].(string))

	run("storage-delete-bucket", "backups")
	run("storage-delete-key", key["key_id"].(string))
	err = adminCommand(context.Background(), []string{"--data-dir", dataDir, "storage-delete-key", key["key_id"].(string)}, io.Discard, io.Discard)
	assert.Error(t, err, "the key is gone")
	err = adminCommand(context.Background(), []string{"--data-dir", dataDir, "storage-set-versioning", "demo-bucket", "Off"}, io.Discard, io.Discard)
	assert.Error(t, err)
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

func TestAdminCLI_PAMAndRestaurantCommands(t *testing.T) {
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := adminCommand(context.Background(), append([]string{"--data-dir", dataDir}, args...), &out, io.Discard)
		return out.String(), err
	}

	out, err := run("create-user", "demo", "alice")
	require.NoError(t, err)
	assert.Contains(t, out, `"alice"`)

	out, err = run("quotas", "--groups", "5", "demo")
	require.NoError(t, err)
	assert.Contains(t, out, `"groups": 5`)
	out, err = run("quotas", "demo")
	require.NoError(t, err)
	assert.Contains(t, out, `"groups": 5`)

	// Maintenance mode answers every PAM call with 503 service_offline.
	_, err = run("maintenance", "on")
	require.NoError(t, err)
	resp, err := http.Post(creds["pam"]["base_url"]+"/v1/teams/demo/service_token", "application/json", strings.NewReader(`{"key_id":"x","key_secret":"y"}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "service_offline")
	out, err = run("maintenance")
	require.NoError(t, err)
	assert.Contains(t, out, `"offline": true`)
	_, err = run("maintenance", "off")
	require.NoError(t, err)

	if _, ok := creds["restaurant"]; !ok {
		return
	}
	guid := "0f8d4b0e-1c7a-4c55-9f1e-6b2f3a9d8e71"
	_, err = run("restaurant-create", "Corner Cafe", guid)
	require.NoError(t, err)
	out, err = run("restaurant-create-client", "kiosk", guid)
	require.NoError(t, err)
	assert.Contains(t, out, `"clientSecret"`)
	out, err = run("restaurant-demo", guid, "25")
	require.NoError(t, err)
	assert.Contains(t, out, `"menuItems": 25`)
	out, err = run("restaurant-get", guid)
	require.NoError(t, err)
	assert.Contains(t, out, "Corner Cafe")
	_, err = run("restaurant-archive", guid, "menuItems", "11111111-2222-4333-8444-555555555555")
	assert.ErrorContains(t, err, "404", "archiving an entity that does not exist")
}
