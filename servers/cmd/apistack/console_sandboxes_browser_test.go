package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/testkit"
)

// consoleSandboxCall makes a sandbox API call with token and decodes its JSON
// answer into out (when not nil); it returns the status.
func consoleSandboxCall(t *testing.T, base, token, method, path, body string, out any) int {
	t.Helper()
	req := testkit.Request{Method: method, URL: base + path, Token: token}
	if body != "" {
		req.Body, req.ContentType = strings.NewReader(body), "application/json"
	}
	resp, raw := req.Do(t)
	if out != nil && resp.StatusCode < 300 {
		require.NoError(t, json.Unmarshal(raw, out), "%s %s: %s", method, path, raw)
	}
	require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, raw)
	return resp.StatusCode
}

// TestBrowser_ConsoleSandboxesInChromium drives the console's Sandboxes page
// in headless Chromium against a real `apistack serve --demo`: a sandbox
// with an advanced clock, a fault, a journal holding a spec violation and a
// delivered fax's webhooks is listed with its counts; its page filters the
// journal, shows each attempt's signed headers, redelivers an event, makes
// a snapshot and forks it into a new sandbox.
func TestBrowser_ConsoleSandboxesInChromium(t *testing.T) {
	p, ctx, watch, screenshot := startBrowserTest(t, "--fax-step-interval", "100ms", "--fax-allow-private-destinations")
	ac, sc := p.creds["admin"], p.creds["sandboxes"]
	admin := ac["base_url"]

	// A sandbox, used: a fax sent and delivered (its webhooks go to the
	// sandbox's inbox), a request that breaks the fax spec, a fault, and
	// its clock moved on by an hour.
	var sb struct {
		ID          string                       `json:"id"`
		Token       string                       `json:"token"`
		Credentials map[string]map[string]string `json:"credentials"`
	}
	consoleSandboxCall(t, sc["base_url"], sc["token"], http.MethodPost, "/sandboxes", `{"ttl": "2h"}`, &sb)
	fc := sb.Credentials["fax"]
	faxID := sendFax(t, fc, admin+faxSamplePath)
	status, raw := faxCall(t, fc, http.MethodPost, "/v2/faxes", "application/json", strings.NewReader(`{"connection_id": "x"}`))
	require.Equal(t, http.StatusUnprocessableEntity, status, "%s", raw)
	consoleSandboxCall(t, admin, sb.Token, http.MethodPost, "/sandboxes/"+sb.ID+"/faults", `{"kind": "internal-error", "api": "pam", "count": 2}`, nil)
	consoleSandboxCall(t, admin, sb.Token, http.MethodPost, "/sandboxes/"+sb.ID+"/clock", `{"advance": "1h"}`, nil)
	type webhookLog struct {
		Data []struct {
			Seq       int64 `json:"seq"`
			Succeeded bool  `json:"succeeded"`
			Event     struct {
				ID           string `json:"id"`
				Type         string `json:"type"`
				RedeliveryOf *int64 `json:"redelivery_of"`
			} `json:"event"`
		} `json:"data"`
	}
	// The delivered event's attempt (waiting on the log, not on time).
	var delivered string
	var after int64
	for delivered == "" {
		var page webhookLog
		consoleSandboxCall(t, admin, sb.Token, http.MethodGet, "/sandboxes/"+sb.ID+"/webhooks?wait=30s&after="+itoa(after), "", &page)
		for _, a := range page.Data {
			after = a.Seq
			if a.Event.Type == "fax.delivered" && a.Succeeded {
				delivered = a.Event.ID
			}
		}
	}

	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(css(sel)))
		require.NoError(t, err, sel)
		return s
	}
	consoleURL := admin + "/console/"
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(consoleURL),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), ac["token"]),
		chromedp.Click(css("#login")),
		chromedp.WaitVisible(css("#live")),
	))

	// The list: the sandbox with its TTL, clock offset, fault and counts.
	row := "table.sandboxes tr#sandbox-" + sb.ID
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(consoleURL+"sandboxes"), chromedp.WaitVisible(css(row))))
	assert.Equal(t, "2h0m0s", strings.TrimSpace(text(row+" td.ttl")))
	assert.Contains(t, text(row+" td.offset"), "1h0m", "the clock's offset")
	assert.Contains(t, text(row+" td.clock"), "real")
	assert.Contains(t, text(row+" td.faults"), "internal-error")
	assert.Contains(t, text(row+" td.faults"), "0/2 taken")
	assert.NotEqual(t, "0", strings.TrimSpace(text(row+" td.requests")), "its journal's entries are counted")
	assert.NotEqual(t, "0", strings.TrimSpace(text(row+" td.webhooks")), "its webhook attempts are counted")
	screenshot("console-sandboxes-list")
	assert.Empty(t, watch.take(), "what went wrong on the list")

	// Its page: the journal with the violation, filtered by status and API.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(row+" a")),
		chromedp.WaitVisible(css("table.journal tr.entry")),
	))
	assert.Equal(t, sb.ID, strings.TrimSpace(text("h1 code.sandbox-id")))
	journal := text("table.journal")
	assert.Contains(t, journal, "SendFax")
	assert.Contains(t, journal, "422")
	assert.NotEmpty(t, strings.TrimSpace(text(`table.journal tr.entry[data-status="422"] td.violations`)), "the bad request's violations")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(css(`form.journal-filter input[name="status"]`), "4xx"),
		chromedp.Submit(css(`form.journal-filter input[name="status"]`)),
		// The answer's form carries the filter (the typed value is not an attribute).
		chromedp.WaitVisible(css(`form.journal-filter input[name="status"][value="4xx"]`)),
		chromedp.WaitVisible(css(`table.journal tr.entry[data-status="422"]`)),
	))
	statuses, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.journal tr.entry")].map(r => r.dataset.status)`))
	require.NoError(t, err)
	require.NotEmpty(t, statuses)
	for _, s := range statuses {
		assert.True(t, strings.HasPrefix(s, "4"), "the 4xx filter shows %s", s)
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(consoleURL+"sandboxes/"+sb.ID+"?api=pam"), chromedp.WaitVisible(css("table.journal"))))
	assert.Contains(t, text("table.journal"), "No request matches.", "no PAM request was made")

	// The webhook log: the delivered event's attempt with its signed
	// headers.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(consoleURL+"sandboxes/"+sb.ID), chromedp.WaitVisible(css("table.webhooks tr.attempt"))))
	attempt := `table.webhooks tr.attempt.ok[data-event="` + delivered + `"]`
	headers := text(attempt + " td.headers")
	assert.Contains(t, strings.ToLower(headers), "signature", "the signed headers")
	assert.Contains(t, text("table.webhooks"), faxID)
	// Redeliver the delivered event.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(attempt+" button.redeliver")),
		chromedp.WaitVisible(css("p.notice")),
	))
	assert.Contains(t, text("p.notice"), "redelivered event "+delivered)
	for redelivered := false; !redelivered; {
		var page webhookLog
		consoleSandboxCall(t, admin, sb.Token, http.MethodGet, "/sandboxes/"+sb.ID+"/webhooks?wait=30s&after="+itoa(after), "", &page)
		for _, a := range page.Data {
			after = a.Seq
			redelivered = redelivered || (a.Event.RedeliveryOf != nil && a.Succeeded)
		}
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(css("table.webhooks tr.attempt"))))
	assert.Contains(t, text("table.webhooks"), "redelivery of")
	assert.Empty(t, watch.take(), "what went wrong on the sandbox's page")

	// A snapshot, then a fork of it: a new sandbox, listed, whose webhook
	// log holds the redelivery too.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css("button.snapshot")),
		chromedp.WaitVisible(css("table.snapshots tr.snapshot-row")),
	))
	assert.Contains(t, text("p.notice"), "snapshot ")
	// (The snapshot's notice goes first, so that the wait below is for the
	// fork's page.)
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("p.notice").remove(); true`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css("table.snapshots button.fork")),
		chromedp.WaitVisible(css("p.notice")),
	))
	assert.Contains(t, text("p.notice"), "forked from snapshot")
	fork := strings.TrimSpace(text("h1 code.sandbox-id"))
	assert.NotEqual(t, sb.ID, fork)
	assert.Contains(t, text("table.summary td.faults"), "internal-error", "the fork has the snapshot's faults")
	assert.Contains(t, text("table.webhooks"), "redelivery of", "the fork has the snapshot's redelivery")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(consoleURL+"sandboxes"), chromedp.WaitVisible(css("table.sandboxes tr#sandbox-"+fork))))
	assert.Empty(t, watch.take(), "what went wrong on the fork")

	// Back on the sandbox: its snapshot and its redelivery.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(consoleURL+"sandboxes/"+sb.ID), chromedp.WaitVisible(css("table.snapshots tr.snapshot-row"))))
	assert.Contains(t, text("table.webhooks"), "redelivery of")
	assert.Empty(t, watch.take(), "what went wrong on the sandbox's page")

	png := screenshot("console-sandboxes")
	if os.Getenv("APISTACK_DOCS_SCREENSHOTS") != "" {
		require.NoError(t, os.WriteFile(filepath.Join("..", "..", "..", "docs", "console-sandboxes.png"), png, 0o644))
	}

	// A filter the page cannot read, and a sandbox that is not there, are
	// answered with what is wrong.
	for path, want := range map[string]string{
		"sandboxes/" + sb.ID + "?status=abc":   "neither a status",
		"sandboxes/" + sb.ID + "?api=billing":  "is none of pam, fax, storage, restaurant",
		"sandboxes/sbx-0000000000000000":       "no sandbox sbx-0000000000000000",
		"sandboxes/" + sb.ID + "?limit=100000": "limit must be a number from 1 to 1000",
	} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(consoleURL+path), chromedp.WaitVisible(css("body"))), path)
		assert.Contains(t, text("body"), want, path)
	}

	// No page shows a token or a secret.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(consoleURL+"sandboxes/"+sb.ID), chromedp.WaitVisible(css("table.webhooks"))))
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(css("html")))
	require.NoError(t, err)
	assert.NotContains(t, html, sb.Token)
	for _, section := range sb.Credentials {
		for key, v := range section {
			if strings.Contains(key, "secret") || key == "api_key" {
				assert.NotContains(t, html, v, key)
			}
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
