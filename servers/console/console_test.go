package console_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/console"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/egress"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/pam/pamtest"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

const adminToken = "adm_console-test-token-0123456789"

// world is a console over a server of each API, with one fax delivered
// after a failed first attempt, and every secret the servers handed out.
type world struct {
	t       *testing.T
	url     string
	fax     *fax.Server
	faxID   string
	secrets map[string]string
	// hookFailures counts the answers the webhook receiver has left to fail.
	hookFailures atomic.Int32
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, secrets: map[string]string{"admin token": adminToken}}
	ctx := context.Background()

	pamEnv := pamtest.Start(t, pamtest.Options{})
	pamEnv.Team(t, "acme")
	pamCreds := pamEnv.ServiceUser(t, "acme", "bot", "pam_admin")
	w.secrets["pam key secret"] = pamCreds.KeySecret

	restEnv := restauranttest.Start(t, restauranttest.Options{})
	w.secrets["restaurant client secret"] = restEnv.ClientSecret

	storeEnv := storagetest.Start(t, storagetest.Options{})
	w.secrets["storage key secret"] = storeEnv.Key.Secret

	dir := t.TempDir()
	db, err := fax.OpenDB(ctx, filepath.Join(dir, "fax.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	masterKey, err := fax.LoadOrCreateMasterKey(filepath.Join(dir, "fax-master.key"))
	require.NoError(t, err)
	w.fax, err = fax.New(ctx, fax.Config{Deps: fax.Deps{DB: db, Logger: slog.New(slog.DiscardHandler)}, MasterKey: masterKey, Settings: fax.Settings{WebhookAttempts: 3, WebhookBackoff: 5 * time.Millisecond, WebhookMaxBackoff: 20 * time.Millisecond, Destinations: egress.Options{AllowPrivate: true}}})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.fax.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	faxAPIHandler, err := w.fax.Handler()
	require.NoError(t, err)
	faxAPI := httptest.NewServer(faxAPIHandler)
	t.Cleanup(faxAPI.Close)
	w.fax.SetBaseURL(faxAPI.URL)

	pdf, err := fax.SamplePDF(1)
	require.NoError(t, err)
	w.hookFailures.Store(1)
	hooks := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/doc.pdf" {
			rw.Header().Set("Content-Type", "application/pdf")
			_, _ = rw.Write(pdf)
			return
		}
		if w.hookFailures.Add(-1) >= 0 {
			rw.WriteHeader(http.StatusInternalServerError)
			return
		}
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hooks.Close)
	w.secrets["webhook URL query secret"] = "hook-query-secret-42"

	acct, err := w.fax.Operator().CreateAccount(ctx, "demo")
	require.NoError(t, err)
	_, apiKey, err := w.fax.Operator().IssueAPIKey(ctx, acct.ID)
	require.NoError(t, err)
	w.secrets["fax API key"] = apiKey
	profile, err := w.fax.Operator().CreateOutboundVoiceProfile(ctx, acct.ID, "default")
	require.NoError(t, err)
	app, err := w.fax.Operator().CreateApplication(ctx, fax.Application{AccountID: acct.ID, Name: "main", WebhookURL: hooks.URL + "/hooks?token=hook-query-secret-42", OutboundVoiceProfileID: profile})
	require.NoError(t, err)
	require.NoError(t, w.fax.Operator().AssignNumber(ctx, acct.ID, "+13125550100", app.ID))

	form := url.Values{"media_url": {hooks.URL + "/doc.pdf"}, "connection_id": {app.ID}, "to": {"+14155550123"}, "from": {"+13125550100"}}
	resp, body := testkit.Request{Method: http.MethodPost, URL: faxAPI.URL + "/v2/faxes", Token: apiKey}.Form(form).Do(t)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, string(body))
	w.faxID = regexp.MustCompile(`"id":"([0-9a-f-]{36})"`).FindStringSubmatch(string(body))[1]
	// Wait for the fax to be delivered and every event acknowledged.
	require.Eventually(t, func() bool {
		f, err := w.fax.Console().Fax(ctx, w.faxID)
		if err != nil || f.Status != "delivered" {
			return false
		}
		for _, e := range f.Events {
			if e.State() != "delivered" {
				return false
			}
		}
		return len(f.Events) == 4
	}, 20*time.Second, 10*time.Millisecond)

	requests := requestlog.New(0)
	requests.Add(requestlog.Entry{Time: time.Now(), API: "pam", Operation: "ListGroups", Method: "GET", Path: "/v1/teams/acme/groups", Status: 200, Latency: 3 * time.Millisecond})
	requests.Add(requestlog.Entry{Time: time.Now(), API: "fax", Operation: "SendFax", Method: "POST", Path: "/v2/faxes", Status: 422, Latency: time.Millisecond, Violations: []string{"body: missing property \"data\""}})

	con, err := console.New(console.Config{
		AdminToken: adminToken, Fax: w.fax.Console(), PAM: pamEnv.Server.Console(), Restaurant: restEnv.Server.Console(), Storage: storeEnv.Server.Console(),
		Requests: requests, Logger: slog.New(slog.DiscardHandler),
		Inbox: func() []console.InboxEvent {
			return []console.InboxEvent{{ID: "evt-1", Type: "fax.delivered", FaxID: w.faxID, Attempt: 1, ReceivedAt: time.Now()}}
		},
	})
	require.NoError(t, err)
	srv := httptest.NewServer(con.Handler())
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

// browser is an HTTP client with a cookie jar that does not follow redirects.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string, headers ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), resp.Header
}

func post(t *testing.T, c *http.Client, u string, form url.Values) (int, string, http.Header) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), resp.Header
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	require.NotNil(t, m, "the page has a CSRF field")
	return m[1]
}

// login logs c in and returns the session's CSRF token.
func (w *world) login(t *testing.T, c *http.Client) string {
	t.Helper()
	status, page, _ := get(t, c, w.url+"/console/login")
	require.Equal(t, http.StatusOK, status)
	status, _, h := post(t, c, w.url+"/console/login", url.Values{"csrf": {csrfOf(t, page)}, "token": {adminToken}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/console/fax", h.Get("Location"))
	status, page, _ = get(t, c, w.url+"/console/fax")
	require.Equal(t, http.StatusOK, status)
	return csrfOf(t, page)
}

// pages are every GET page of the console.
var pages = []string{"/console/fax", "/console/fax/live", "/console/pam", "/console/restaurant", "/console/storage", "/console/requests",
	"/console/sandboxes", "/console/sandboxes/sbx-0123456789abcdef"}

func TestConsole_EveryPageAndActionRefusesWithoutASession(t *testing.T) {
	w := newWorld(t)
	c := browser(t)
	for _, p := range pages {
		t.Run("GET "+p, func(t *testing.T) {
			status, body, h := get(t, c, w.url+p)
			assert.Equal(t, http.StatusSeeOther, status)
			assert.Equal(t, "/console/login", h.Get("Location"))
			assert.NotContains(t, body, w.faxID)
		})
	}
	status, _, _ := get(t, c, w.url+"/console/fax/live", "X-Console-Live", "1")
	assert.Equal(t, http.StatusUnauthorized, status, "a live fragment polled without a session is refused")

	before, err := w.fax.Console().Fax(context.Background(), w.faxID)
	require.NoError(t, err)
	for _, action := range []string{"/console/fax/redeliver", "/console/restaurant/demo", "/console/restaurant/import", "/console/logout",
		"/console/sandboxes/sbx-0123456789abcdef/redeliver", "/console/sandboxes/sbx-0123456789abcdef/snapshot", "/console/sandboxes/fork"} {
		t.Run("POST "+action, func(t *testing.T) {
			status, _, _ := post(t, c, w.url+action, url.Values{"csrf": {"anything"}, "seq": {"1"}})
			assert.Equal(t, http.StatusForbidden, status)
		})
	}
	after, err := w.fax.Console().Fax(context.Background(), w.faxID)
	require.NoError(t, err)
	assert.Len(t, after.Events, len(before.Events), "nothing was redelivered")

	// A cookie that is not a session's is no session.
	u, _ := url.Parse(w.url)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "apistack_console", Value: adminToken, Path: "/console"}})
	status, _, _ = get(t, c, w.url+"/console/pam")
	assert.Equal(t, http.StatusSeeOther, status)
}

func TestConsole_Login(t *testing.T) {
	w := newWorld(t)

	t.Run("a wrong token is refused", func(t *testing.T) {
		c := browser(t)
		_, page, _ := get(t, c, w.url+"/console/login")
		status, body, _ := post(t, c, w.url+"/console/login", url.Values{"csrf": {csrfOf(t, page)}, "token": {"adm_wrong"}})
		assert.Equal(t, http.StatusUnauthorized, status)
		assert.Contains(t, body, "not the admin token")
		status, _, _ = get(t, c, w.url+"/console/fax")
		assert.Equal(t, http.StatusSeeOther, status)
	})
	t.Run("a login form without its CSRF cookie is refused", func(t *testing.T) {
		status, _, _ := post(t, browser(t), w.url+"/console/login", url.Values{"csrf": {"forged"}, "token": {adminToken}})
		assert.Equal(t, http.StatusForbidden, status)
	})
	t.Run("a forged login CSRF token is refused", func(t *testing.T) {
		c := browser(t)
		get(t, c, w.url+"/console/login")
		status, _, _ := post(t, c, w.url+"/console/login", url.Values{"csrf": {"forged"}, "token": {adminToken}})
		assert.Equal(t, http.StatusForbidden, status)
	})
	t.Run("the session cookie is a random id, HttpOnly, SameSite=Strict, on /console", func(t *testing.T) {
		c := browser(t)
		_, page, _ := get(t, c, w.url+"/console/login")
		_, _, h := post(t, c, w.url+"/console/login", url.Values{"csrf": {csrfOf(t, page)}, "token": {adminToken}})
		var session *http.Cookie
		for _, ck := range (&http.Response{Header: h}).Cookies() {
			if ck.Name == "apistack_console" {
				session = ck
			}
		}
		require.NotNil(t, session)
		assert.True(t, session.HttpOnly)
		assert.Equal(t, http.SameSiteStrictMode, session.SameSite)
		assert.Equal(t, "/console", session.Path)
		assert.NotContains(t, session.Value, adminToken)
		assert.GreaterOrEqual(t, len(session.Value), 40)
	})
	t.Run("logging out ends the session", func(t *testing.T) {
		c := browser(t)
		csrf := w.login(t, c)
		status, _, _ := post(t, c, w.url+"/console/logout", url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusSeeOther, status)
		status, _, _ = get(t, c, w.url+"/console/fax")
		assert.Equal(t, http.StatusSeeOther, status)
	})
}

func TestConsole_ForgedCSRFIsRefusedAndTheRightOneRedelivers(t *testing.T) {
	w := newWorld(t)
	c := browser(t)
	csrf := w.login(t, c)
	f, err := w.fax.Console().Fax(context.Background(), w.faxID)
	require.NoError(t, err)
	seq := f.Events[0].Seq

	for name, token := range map[string]string{"forged": "forged-token", "missing": "", "another session's": w.login(t, browser(t))} {
		t.Run(name, func(t *testing.T) {
			status, _, _ := post(t, c, w.url+"/console/fax/redeliver", url.Values{"csrf": {token}, "seq": {strconv.FormatInt(seq, 10)}})
			assert.Equal(t, http.StatusForbidden, status)
		})
	}
	f, err = w.fax.Console().Fax(context.Background(), w.faxID)
	require.NoError(t, err)
	require.Len(t, f.Events, 4, "no forged form redelivered")

	status, _, h := post(t, c, w.url+"/console/fax/redeliver", url.Values{"csrf": {csrf}, "seq": {strconv.FormatInt(seq, 10)}})
	require.Equal(t, http.StatusSeeOther, status)
	assert.Contains(t, h.Get("Location"), "/console/fax")
	require.Eventually(t, func() bool {
		_, page, _ := get(t, c, w.url+"/console/fax/live", "X-Console-Live", "1")
		return strings.Contains(page, "redelivery of #"+strconv.FormatInt(seq, 10)) && strings.Count(page, `data-state="delivered"`) == 5
	}, 10*time.Second, 10*time.Millisecond)
}

func TestConsole_PagesRenderTheirContent(t *testing.T) {
	w := newWorld(t)
	c := browser(t)
	w.login(t, c)
	tests := []struct {
		path string
		want []string
	}{
		{"/console/fax", []string{w.faxID, `data-status="delivered"`, "fax.queued", "HTTP 500", "HTTP 204", "Webhook-Signature-Ed25519", "/hooks", "evt-1", `src="/console/static/console.js"`}},
		{"/console/fax/live", []string{w.faxID, "media.processed", "sending", "Redeliver"}},
		{"/console/pam", []string{"acme", "bot", "pam_admin", "left"}},
		{"/console/restaurant", []string{"Test Bistro", "Other Bistro", "test client", "menuItems", "Demo generator"}},
		{"/console/storage", []string{storagetest.Bucket, storagetest.VersionedBucket, "Enabled", "No lifecycle configuration"}},
		{"/console/requests", []string{"/v1/teams/acme/groups", "SendFax", "missing property"}},
		{"/console/requests?api=pam", []string{"/v1/teams/acme/groups"}},
		{"/console/static/console.css", []string{"--accent"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, body, h := get(t, c, w.url+tt.path)
			require.Equal(t, http.StatusOK, status)
			for _, s := range tt.want {
				assert.Contains(t, body, s)
			}
			assert.Contains(t, h.Get("Content-Security-Policy"), "default-src 'self'")
		})
	}
	_, body, _ := get(t, c, w.url+"/console/requests?api=pam")
	assert.NotContains(t, body, "SendFax", "the filter keeps one API")
	// Without the sandbox API, its page says so and a sandbox's is not found.
	status, body, _ := get(t, c, w.url+"/console/sandboxes")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "The sandbox API is not running.")
	status, _, _ = get(t, c, w.url+"/console/sandboxes/sbx-0123456789abcdef")
	assert.Equal(t, http.StatusNotFound, status)
	_, body, _ = get(t, c, w.url+"/console/requests?status=4xx")
	assert.Contains(t, body, "SendFax")
	assert.NotContains(t, body, "/v1/teams/acme/groups")
	_, body, _ = get(t, c, w.url+"/console/requests?limit=1")
	assert.Contains(t, body, "SendFax", "the last request of each API")
	assert.Contains(t, body, "/v1/teams/acme/groups", "the last request of each API")
	_, body, _ = get(t, c, w.url+"/console/fax")
	assert.NotContains(t, body, "hook-query-secret-42", "the webhook URL is shown without its query")
}

func TestConsole_RestaurantDemoImportAndPaging(t *testing.T) {
	w := newWorld(t)
	c := browser(t)
	csrf := w.login(t, c)
	_, page, _ := get(t, c, w.url+"/console/restaurant")
	guid := regexp.MustCompile(`<option value="([0-9a-f-]{36})" selected>Other Bistro`).FindStringSubmatch(page)
	require.NotNil(t, guid, "the first restaurant by name is selected")

	status, body, _ := post(t, c, w.url+"/console/restaurant/demo", url.Values{"csrf": {csrf}, "restaurant": {guid[1]}, "items": {"25"}, "seed": {"3"}})
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "Result of the demo generator")
	assert.Contains(t, body, "Imported")

	status, body, _ = get(t, c, w.url+"/console/restaurant?restaurant="+guid[1]+"&resource=menuItems&pageSize=5")
	require.Equal(t, http.StatusOK, status)
	next := regexp.MustCompile(`pageToken=([^"&]+)"`).FindStringSubmatch(body)
	require.NotNil(t, next, "a next-page link with the API's pageToken")
	first := regexp.MustCompile(`<tr><td><code>([0-9a-f-]{36})</code>`).FindAllStringSubmatch(body, -1)
	require.Len(t, first, 5)
	token, err := url.QueryUnescape(strings.ReplaceAll(next[1], "&amp;", "&"))
	require.NoError(t, err)
	_, body, _ = get(t, c, w.url+"/console/restaurant?restaurant="+guid[1]+"&resource=menuItems&pageSize=5&pageToken="+url.QueryEscape(token))
	second := regexp.MustCompile(`<tr><td><code>([0-9a-f-]{36})</code>`).FindAllStringSubmatch(body, -1)
	require.NotEmpty(t, second)
	assert.NotEqual(t, first[0][1], second[0][1], "the next page starts after the first")

	status, body, _ = post(t, c, w.url+"/console/restaurant/import", url.Values{"csrf": {csrf}, "restaurant": {guid[1]}, "document": {`{"menuItems":[{"guid":"not-a-guid"}]}`}})
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Contains(t, body, "Rejected whole, nothing written")
	assert.Contains(t, body, "/menuItems/0")
}

func TestConsole_NoPageContainsASecret(t *testing.T) {
	w := newWorld(t)
	c := browser(t)
	csrf := w.login(t, c)
	var rendered []string
	for _, p := range append(pages, "/console/login", "/console/requests?violations=1", "/console/restaurant?resource=tables") {
		_, body, _ := get(t, c, w.url+p)
		rendered = append(rendered, body)
	}
	_, body, _ := post(t, c, w.url+"/console/restaurant/demo", url.Values{"csrf": {csrf}, "items": {"5"}})
	rendered = append(rendered, body)
	_, body, _ = post(t, c, w.url+"/console/restaurant/import", url.Values{"csrf": {csrf}, "document": {"{"}})
	rendered = append(rendered, body)
	require.Len(t, w.secrets, 6)
	for what, secret := range w.secrets {
		require.NotEmpty(t, secret)
		for i, page := range rendered {
			assert.NotContains(t, page, secret, "page %d shows the %s", i, what)
		}
	}
}

func TestConsole_WrongTokensAreLimitedPerSource(t *testing.T) {
	w := newWorld(t)
	from := func(ip string) *http.Client {
		c := browser(t)
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c.Transport = &http.Transport{DialContext: d.DialContext}
		return c
	}
	attempt := func(c *http.Client, token string) (int, string, http.Header) {
		_, page, _ := get(t, c, w.url+"/console/login")
		return post(t, c, w.url+"/console/login", url.Values{"csrf": {csrfOf(t, page)}, "token": {token}})
	}
	attacker := from("127.0.0.2")
	for i := range 10 {
		status, _, _ := attempt(attacker, "adm_guess")
		require.Equal(t, http.StatusUnauthorized, status, "wrong token %d", i+1)
	}
	for range 5 {
		status, body, h := attempt(attacker, "adm_guess")
		assert.Equal(t, http.StatusTooManyRequests, status)
		assert.Contains(t, body, "Too many wrong tokens")
		assert.NotEmpty(t, h.Get("Retry-After"))
	}
	status, _, _ := attempt(attacker, adminToken)
	assert.Equal(t, http.StatusTooManyRequests, status, "the right token too, while the source is blocked")
	status, _, _ = attempt(from("127.0.0.3"), adminToken)
	assert.Equal(t, http.StatusSeeOther, status, "another source logs in")
}
