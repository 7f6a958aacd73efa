package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// chromiumPath returns the Chromium the browser tests drive: $APISTACK_CHROMIUM
// or Debian's /usr/bin/chromium. Without it the test skips, unless CI=true,
// where it fails: .ci/run installs the chromium package.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("APISTACK_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	_, err := os.Stat(p)
	testkit.Need(t, "Chromium (the Debian package chromium: apt-get install -y chromium)", err)
	return p
}

// artifactsDir is where the browser tests write screenshots: $APISTACK_ARTIFACTS
// or artifacts/screenshots at the repository's root (git-ignored).
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("APISTACK_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "artifacts", "screenshots")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// serveProcess is a real `apistack serve --demo` process.
type serveProcess struct {
	creds map[string]map[string]string
	cmd   *exec.Cmd
	out   *safebuf.Buffer
}

// startServeProcess runs the built apistack's `serve --demo` on free
// loopback ports until the test ends.
func startServeProcess(t *testing.T, extra ...string) *serveProcess {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"serve", "--demo"}, loopbackServeArgs(filepath.Join(dir, "data"), extra...)...)
	p := &serveProcess{cmd: exec.Command(apistackBinary(t), args...), out: &safebuf.Buffer{}}
	p.cmd.Stdout = p.out
	stderr := &safebuf.Buffer{}
	p.cmd.Stderr = stderr
	proc := testkit.Start(t, p.cmd, testkit.Stop{Signal: os.Interrupt, Grace: 30 * time.Second}, "apistack's log", stderr.String)
	proc.Await(t, 60*time.Second, 20*time.Millisecond, func() bool { return strings.Contains(p.out.String(), "console ") },
		"apistack did not start", stderr.String)
	data, err := os.ReadFile(filepath.Join(dir, "data", "demo-credentials.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &p.creds))
	return p
}

// faxAPI calls the demo fax account's API.
func faxAPI(t *testing.T, fc map[string]string, method, path, contentType string, body io.Reader) map[string]any {
	t.Helper()
	status, raw := faxCall(t, fc, method, path, contentType, body)
	require.Less(t, status, 300, "%s %s: %s", method, path, raw)
	var out struct {
		Data map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &out))
	return out.Data
}

func sendFax(t *testing.T, fc map[string]string, mediaURL string) string {
	t.Helper()
	status, raw := postDemoFax(t, fc, mediaURL)
	require.Less(t, status, 300, "POST /v2/faxes: %s", raw)
	var sent struct {
		Data map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &sent))
	return sent.Data["id"].(string)
}

// pageWatch records what the browser saw go wrong: console errors, uncaught
// exceptions, error entries of its log, and requests to another origin than
// their page's.
type pageWatch struct {
	mu       sync.Mutex
	problems []string
	requests int
}

func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

func (w *pageWatch) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			w.problems = append(w.problems, "console error: "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		w.problems = append(w.problems, fmt.Sprintf("exception: %s at %s:%d", msg, d.URL, d.LineNumber))
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			w.problems = append(w.problems, fmt.Sprintf("browser log error (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		w.requests++
		u := ev.Request.URL
		if strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:") || strings.HasPrefix(u, "about:") {
			return
		}
		if origin(u) != origin(ev.DocumentURL) {
			w.problems = append(w.problems, fmt.Sprintf("request to another origin: %s from %s", u, ev.DocumentURL))
		}
	}
}

func (w *pageWatch) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.problems
	w.problems = nil
	return p
}

// startBrowserTest starts `apistack serve --demo` with the extra flags
// (startServeProcess) and headless Chromium, both closed when the test
// ends, with a pageWatch listening to the browser; screenshot writes the
// page into artifactsDir as name.png and returns the image. Without
// Chromium, or with -short, the test skips.
func startBrowserTest(t *testing.T, extra ...string) (p *serveProcess, ctx context.Context, watch *pageWatch, screenshot func(name string) []byte) {
	t.Helper()
	chromium := chromiumPath(t)
	if testing.Short() {
		t.Skip("-short: the browser test starts apistack and Chromium")
	}
	shots := artifactsDir(t)
	p = startServeProcess(t, extra...)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.Headless, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000), chromedp.UserDataDir(t.TempDir()))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(cancelTimeout)
	watch = &pageWatch{}
	require.NoError(t, chromedp.Listen(ctx, watch.listen))
	screenshot = func(name string) []byte {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644))
		return png
	}
	return p, ctx, watch, screenshot
}

// TestBrowser_ConsoleAndDocsInChromium drives headless Chromium through the
// console of a real `apistack serve --demo`: log in; watch a fax reach
// delivered without a reload; watch a failing webhook receiver's failed
// attempt and its retry, then redeliver; open every console page and every
// API's /docs/ page; no console error, no request to another origin.
func TestBrowser_ConsoleAndDocsInChromium(t *testing.T) {
	p, ctx, watch, screenshot := startBrowserTest(t, "--fax-step-interval", "400ms", "--fax-allow-private-destinations")
	fc, ac := p.creds["fax"], p.creds["admin"]
	consoleURL := ac["base_url"] + "/console/"
	assert.Contains(t, p.out.String(), consoleURL, "the banner prints the console's URL")

	// A webhook receiver that answers 500 to its first two deliveries, then
	// acknowledges: the retries, not the test's timing, make it succeed.
	var failuresLeft, received atomic.Int32
	failuresLeft.Store(2)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if failuresLeft.Add(-1) >= 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	clean := func(page string) {
		t.Helper()
		assert.Empty(t, watch.take(), "what went wrong on %s", page)
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }

	// Log in.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(consoleURL),
		chromedp.WaitVisible(css("#token")),
	))
	screenshot("login")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(css("#token"), ac["token"]),
		chromedp.Click(css("#login")),
		chromedp.WaitVisible(css("#live")),
	))
	cookies, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.cookie"))
	require.NoError(t, err)
	assert.NotContains(t, cookies, "apistack_console", "the session cookie is HttpOnly")
	clean("login")

	// A fax reaches delivered in the page without a reload.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool]("window.__notReloaded = true"))
	require.NoError(t, err)
	faxID := sendFax(t, fc, ac["base_url"]+faxSamplePath)
	faxSel := "article#fax-" + faxID
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(css(faxSel)),
		chromedp.WaitVisible(css(faxSel+`[data-status="delivered"] .timeline li[data-status="delivered"]`)),
		chromedp.WaitVisible(css(faxSel+` tbody.event[data-type="fax.delivered"][data-state="delivered"]`)),
	))
	still, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.__notReloaded === true"))
	require.NoError(t, err)
	assert.True(t, still, "the page was updated in place, not reloaded")
	timeline, err := chromedp.Run(ctx, chromedp.Text(css(faxSel+" .timeline")))
	require.NoError(t, err)
	for _, state := range []string{"queued", "media.processed", "sending", "delivered"} {
		assert.Contains(t, timeline, state)
	}
	clean("fax (delivered)")

	// The receiver fails twice: the page shows the failed attempts, each
	// with its next retry, then the retry that succeeded.
	faxAPI(t, fc, http.MethodPatch, "/v2/fax_applications/"+fc["connection_id"], "application/json",
		strings.NewReader(fmt.Sprintf(`{"webhook_url": %q}`, receiver.URL+"/hooks?token=receiver-secret")))
	failedID := sendFax(t, fc, ac["base_url"]+faxSamplePath)
	queuedSel := "article#fax-" + failedID + ` tbody.event[data-type="fax.queued"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(css(queuedSel+" tr.attempt.failed")),
		chromedp.WaitVisible(css(queuedSel+`[data-state="delivered"] tr.attempt.ok`)),
		chromedp.WaitVisible(css("article#fax-"+failedID+`[data-status="delivered"]`)),
		chromedp.WaitVisible(css("article#fax-"+failedID+` tbody.event[data-type="fax.delivered"][data-state="delivered"]`)),
	))
	attempts, err := chromedp.Run(ctx, chromedp.Text(css(queuedSel+" table.attempts")))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(attempts, "HTTP 500"), attempts)
	assert.Contains(t, attempts, "HTTP 204")
	assert.Contains(t, attempts, "/hooks")
	assert.NotContains(t, attempts, "receiver-secret", "the target is shown without its query")
	nextRetry, err := chromedp.Run(ctx, chromedp.Text(css(queuedSel+" tr.attempt.failed td.next-retry")))
	require.NoError(t, err)
	assert.NotEqual(t, "—", strings.TrimSpace(nextRetry), "a failed attempt shows its next retry")
	screenshot("fax-failed-attempt")
	still, err = chromedp.Run(ctx, chromedp.Evaluate[bool]("window.__notReloaded === true"))
	require.NoError(t, err)
	assert.True(t, still, "the attempts appeared without a reload")
	// (The 500s answered the server, not the browser: the page stays clean.)
	clean("fax (retried)")

	// Redeliver the first event: a new delivery, acknowledged.
	before := received.Load()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(queuedSel+`[data-redelivery="0"] button.redeliver`)),
		chromedp.WaitVisible(css("article#fax-"+failedID+` tbody.event[data-redelivery="1"][data-state="delivered"] tr.attempt.ok`)),
	))
	assert.Greater(t, received.Load(), before, "the receiver got the redelivery")
	screenshot("fax")
	clean("fax (redelivered)")

	// Every console page renders its content.
	for _, pg := range []struct{ path, sel, want string }{
		{"pam", "section.team", "demo-bot"},
		{"restaurant", "table.restaurants", "Demo Bistro"},
		{"storage", "table.buckets", "demo-versioned"},
		{"requests", "table.requests", "method"},
		{"fax", "#live", failedID},
	} {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(consoleURL+pg.path),
			chromedp.WaitVisible(css(pg.sel)),
		), pg.path)
		text, err := chromedp.Run(ctx, chromedp.Text(css("main")))
		require.NoError(t, err)
		assert.Contains(t, text, pg.want, pg.path)
		for section, c := range p.creds {
			for key, v := range c {
				if strings.Contains(key, "secret") || key == "api_key" || key == "token" {
					html, err := chromedp.Run(ctx, chromedp.OuterHTML(css("html")))
					require.NoError(t, err)
					assert.NotContains(t, html, v, "%s shows %s.%s", pg.path, section, key)
				}
			}
		}
		screenshot("console-" + pg.path)
		clean(pg.path)
	}

	// Every API's Swagger UI renders offline.
	for _, api := range []string{"pam", "fax", "storage", "restaurant", "admin"} {
		base := p.creds[api]["base_url"]
		if api == "storage" {
			base = p.creds[api]["endpoint"]
		}
		require.NotEmpty(t, base, api)
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(base+"/docs/"),
			chromedp.WaitVisible(css(".swagger-ui .info .title")),
			chromedp.WaitVisible(css(".swagger-ui .opblock")),
		), api)
		title, err := chromedp.Run(ctx, chromedp.Text(css(".swagger-ui .info .title")))
		require.NoError(t, err)
		assert.NotEmpty(t, strings.TrimSpace(title), api)
		screenshot("docs-" + api)
		clean(api + " docs")
	}
	// The watch hears what it is meant to: a console error, and an attempt to
	// reach another origin (which the console's Content-Security-Policy
	// blocks before it leaves the browser: the watch hears the block).
	watch.mu.Lock()
	assert.Positive(t, watch.requests, "the watch saw the browser's requests")
	watch.mu.Unlock()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(consoleURL+"requests"), chromedp.WaitVisible(css("table.requests"))))
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`console.error("probe"); fetch("http://127.0.0.1:9/elsewhere").catch(() => {}); true`))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		watch.mu.Lock()
		defer watch.mu.Unlock()
		var sawError, sawOrigin bool
		for _, p := range watch.problems {
			sawError = sawError || strings.Contains(p, "probe")
			sawOrigin = sawOrigin || strings.Contains(p, "http://127.0.0.1:9/elsewhere")
		}
		return sawError && sawOrigin
	}, 10*time.Second, 20*time.Millisecond, "the watch missed the probes")
}
