package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/contract"
	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy"
	"github.com/apistack/apistack/servers/internal/har"
	"github.com/apistack/apistack/servers/internal/har/hartest"
	"github.com/apistack/apistack/servers/internal/safebuf"
)

var proxyAddr = regexp.MustCompile(`on (http://[^ ]+) ->`)

// runningProxy is `apistack proxy` run in the test's process.
type runningProxy struct {
	URL    string
	cancel context.CancelFunc
	done   chan error
	out    *safebuf.Buffer
}

// startProxyCommand runs `apistack proxy args... --addr 127.0.0.1:0` until
// stop is called.
func startProxyCommand(t *testing.T, args ...string) *runningProxy {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &runningProxy{cancel: cancel, done: make(chan error, 1), out: &safebuf.Buffer{}}
	stderr := &safebuf.Buffer{}
	go func() { p.done <- proxyCommand(ctx, append(args, "--addr", "127.0.0.1:0"), p.out, stderr) }()
	require.Eventually(t, func() bool { return strings.Contains(p.out.String(), "live summary") }, 10*time.Second, 5*time.Millisecond,
		"proxy did not start: %s", stderr.String())
	p.URL = proxyAddr.FindStringSubmatch(p.out.String())[1]
	t.Cleanup(func() { cancel(); <-p.done })
	return p
}

// stop ends the proxy as SIGINT does and returns its error and output.
func (p *runningProxy) stop(t *testing.T) (string, error) {
	t.Helper()
	p.cancel()
	select {
	case err := <-p.done:
		p.done <- err
		return p.out.String(), err
	case <-time.After(30 * time.Second):
		t.Fatal("proxy did not stop")
		return "", nil
	}
}

// requireConforming fails unless every entry names its operation and
// keeps to the spec.
func requireConforming(t *testing.T, log *har.Log, atLeast int) {
	t.Helper()
	require.GreaterOrEqual(t, len(log.Entries), atLeast)
	for i, e := range log.Entries {
		assert.NotEmpty(t, e.Operation, "entry %d %s %s", i, e.Request.Method, e.Request.URL)
		assert.Empty(t, e.Violations, "entry %d %s %s", i, e.Request.Method, e.Request.URL)
	}
}

// validating is a client transport that fails the test on any violation.
func validating(t *testing.T, api contract.API, next http.RoundTripper) http.RoundTripper {
	t.Helper()
	rt, err := contract.ForAPI(api, next, contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	return rt
}

// Each API's client works unchanged through the proxy; each exchange is
// recorded with its operation and no violation, and a replay of each
// recording against the stack that answered it finds no drift.
func TestProxy_EachAPIThroughTheProxyThenDriftFindsNone(t *testing.T) {
	dir := t.TempDir()
	creds, _, stop := startServe(t, filepath.Join(dir, "data"))
	t.Cleanup(func() { assert.NoError(t, stop()) })
	credsFile := filepath.Join(dir, "data", "demo-credentials.json")
	ctx := t.Context()

	record := func(t *testing.T, name string, args ...string) (*runningProxy, string) {
		path := filepath.Join(dir, name+".har")
		return startProxyCommand(t, append([]string{"--record", path}, args...)...), path
	}
	drift := func(t *testing.T, api, path string) {
		out := &safebuf.Buffer{}
		err := driftCommand(ctx, []string{"--api", api, "--har", path, "--credentials", credsFile}, out, out)
		require.NoError(t, err, "%s", out.String())
		assert.Contains(t, out.String(), " 0 differences")
	}

	t.Run("pam", func(t *testing.T) {
		pc := creds["pam"]
		p, path := record(t, "pam", "--api", "pam", "--upstream", pc["base_url"])
		client, err := pam.New(pam.Config{BaseURL: p.URL, Team: pc["team"], KeyID: pc["key_id"], KeySecret: pc["key_secret"],
			Transport: validating(t, contract.PAM, nil)})
		require.NoError(t, err)
		for _, err := range client.ListGroups(ctx, nil) {
			require.NoError(t, err)
		}
		_, err = client.CreateGroup(ctx, "proxied", pam.EndUser)
		require.NoError(t, err)
		_, err = client.GetGroup(ctx, "proxied")
		require.NoError(t, err)
		require.NoError(t, client.DeleteGroup(ctx, "proxied"))
		out, err := p.stop(t)
		require.NoError(t, err)
		assert.Contains(t, out, "CreateGroup")
		log := hartest.ReadFile(t, path)
		requireConforming(t, log, 5)
		drift(t, "pam", path)
	})

	t.Run("restaurant", func(t *testing.T) {
		rc := creds["restaurant"]
		p, path := record(t, "restaurant", "--api", "restaurant", "--upstream", rc["base_url"])
		client, err := restaurant.New(restaurant.Config{BaseURL: p.URL, ClientID: rc["client_id"], ClientSecret: rc["client_secret"],
			Restaurant: rc["restaurant_guid"], Transport: validating(t, contract.Restaurant, nil)})
		require.NoError(t, err)
		n := 0
		for m, err := range client.ListMenus(ctx, nil) {
			require.NoError(t, err)
			if n == 0 {
				_, err := client.GetMenu(ctx, m.GUID)
				require.NoError(t, err)
			}
			n++
		}
		require.NotZero(t, n)
		_, err = p.stop(t)
		require.NoError(t, err)
		requireConforming(t, hartest.ReadFile(t, path), 3)
		drift(t, "restaurant", path)
	})

	t.Run("storage forward proxy", func(t *testing.T) {
		sc := creds["storage"]
		p, path := record(t, "storage", "--api", "storage", "--forward")
		proxyURL, err := url.Parse(p.URL)
		require.NoError(t, err)
		through := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
		client, err := storage.New(storage.Config{Endpoint: sc["endpoint"], Region: sc["region"], KeyID: sc["key_id"], Secret: sc["secret"],
			Transport: validating(t, contract.Storage, through)})
		require.NoError(t, err)
		cfg := storage.Configuration(storage.ExpireAfterDays("expire-logs", "logs/", 30))
		// The signature names the storage host, and holds: the forward
		// proxy keeps the request's own host.
		require.NoError(t, client.PutLifecycle(ctx, sc["bucket"], cfg))
		got, err := client.GetLifecycle(ctx, sc["bucket"])
		require.NoError(t, err)
		require.Len(t, got.Rules, 1)
		_, err = p.stop(t)
		require.NoError(t, err)
		log := hartest.ReadFile(t, path)
		requireConforming(t, log, 2)
		for _, e := range log.Entries {
			assert.True(t, strings.HasPrefix(e.Request.URL, sc["endpoint"]), "recorded with the storage host: %s", e.Request.URL)
			assert.Equal(t, har.Redacted, e.Request.Header().Get("Authorization"))
		}
		drift(t, "storage", path)
	})

	t.Run("fax and its webhooks", func(t *testing.T) {
		fc := creds["fax"]
		key, err := faxclient.ParseWebhookPublicKey(fc["webhook_public_key"])
		require.NoError(t, err)
		var mu sync.Mutex
		var events []faxclient.Event
		receiver, err := faxclient.NewWebhookHandler(key, func(_ context.Context, e faxclient.Event) error {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
			return nil
		})
		require.NoError(t, err)
		rcv := httptest.NewServer(receiver)
		t.Cleanup(rcv.Close)
		hooks, hooksPath := record(t, "fax-webhooks", "--api", "fax", "--webhooks", "--upstream", rcv.URL, "--webhook-public-key", fc["webhook_public_key"])
		_ = hooks
		p, path := record(t, "fax", "--api", "fax", "--upstream", fc["base_url"])
		client, err := faxclient.New(faxclient.Config{BaseURL: p.URL, APIKey: fc["api_key"], Transport: validating(t, contract.Fax, nil)})
		require.NoError(t, err)
		sent, err := client.SendFax(ctx, faxclient.SendFaxParams{ConnectionID: fc["connection_id"], From: fc["from"], To: "+13125550800",
			MediaURL: creds["admin"]["base_url"] + "/fax/sample.pdf", WebhookURL: hooks.URL + "/webhooks"})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range events {
				if e.Type == "fax.delivered" {
					return true
				}
			}
			return false
		}, 30*time.Second, 20*time.Millisecond, "the fax's webhooks did not arrive through the proxy")
		_, err = client.GetFax(ctx, sent.ID.String())
		require.NoError(t, err)
		_, err = p.stop(t)
		require.NoError(t, err)
		requireConforming(t, hartest.ReadFile(t, path), 2)

		// A forged delivery passes on too, its signature found wrong.
		resp, err := http.Post(hooks.URL+"/webhooks", "application/json", strings.NewReader(`{"data":{}}`))
		require.NoError(t, err)
		resp.Body.Close()
		_, err = hooks.stop(t)
		require.NoError(t, err)
		log := hartest.ReadFile(t, hooksPath)
		require.GreaterOrEqual(t, len(log.Entries), 4)
		var forged har.Entry
		var delivered []har.Entry
		forgedAt := -1
		for i, e := range log.Entries {
			if e.Request.PostData != nil && e.Request.PostData.Text == `{"data":{}}` {
				forged, forgedAt = e, i
			} else {
				delivered = append(delivered, e)
			}
		}
		require.NotEqual(t, -1, forgedAt, "the forged delivery is recorded")
		requireConforming(t, &har.Log{Entries: delivered}, 3)
		var where []string
		for _, v := range forged.Violations {
			where = append(where, v.Where+" "+v.Pointer)
		}
		assert.Contains(t, where, "request /security", "%+v", forged.Violations)

		// Offline, the deliveries keep to the webhooks spec but the forged one.
		out := &safebuf.Buffer{}
		err = conformCommand(ctx, []string{"--api", "fax", "--webhooks", "--har", hooksPath}, out, out)
		var failed *checksFailed
		require.ErrorAs(t, err, &failed, "%s", out.String())
		assert.Contains(t, out.String(), fmt.Sprintf("entry %d ReceiveFaxEvent", forgedAt))
		assert.Equal(t, len(forged.Violations), strings.Count(out.String(), "ReceiveFaxEvent"), "%s", out.String())
	})
}

func TestProxyCommand_UsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--api", "nope", "--upstream", "http://x"},
		{"--api", "pam"},
		{"--api", "pam", "--upstream", "ftp://x"},
		{"--api", "pam", "--webhooks", "--upstream", "http://x"},
		{"--api", "storage", "--forward", "--upstream", "http://x"},
		{"--api", "fax", "--upstream", "http://x", "--webhook-public-key", "AAAA"},
		{"--api", "pam", "--upstream", "http://x", "--body-cap", "0"},
	} {
		err := proxyCommand(t.Context(), args, &safebuf.Buffer{}, &safebuf.Buffer{})
		assert.Error(t, err, "%q", args)
		assert.Equal(t, 2, exitStatus(err, &safebuf.Buffer{}), "%q", args)
	}
}

func TestReportPath(t *testing.T) {
	assert.Equal(t, "/_apistack/report", harproxy.ReportPath)
}
