package fax

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/internal/egress"
	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// publicNames keeps the default destination policy (public addresses
// only) and makes each name of hosts resolve to a public address, behind
// which the dialer connects to the name's local address instead: a test
// reaches "public" servers without sending anything off the machine. The
// local addresses are read at dial time (hosts.set adds one later).
func publicNames(hosts *localHosts) harnessOption {
	return func(c *Config) {
		var d net.Dialer
		c.Destinations = egress.Options{
			Resolver: hosts,
			Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
				ap := netip.MustParseAddrPort(address)
				if to, ok := hosts.local(ap.Addr()); ok {
					return d.DialContext(ctx, network, to)
				}
				return d.DialContext(ctx, network, address)
			},
		}
	}
}

// localHosts maps test names to public-looking addresses, and those to
// the local addresses really dialled.
type localHosts struct {
	mu     sync.Mutex
	ips    map[string]netip.Addr
	locals map[netip.Addr]string
	next   netip.Addr
}

func newLocalHosts(names map[string]string) *localHosts {
	l := &localHosts{ips: map[string]netip.Addr{}, locals: map[netip.Addr]string{}, next: netip.MustParseAddr("93.184.215.10")}
	for name, addr := range names {
		l.set(name, addr)
	}
	return l
}

// set makes name resolve to a new public-looking address that dials local.
func (l *localHosts) set(name, local string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ips[name], l.locals[l.next] = l.next, local
	l.next = l.next.Next()
}

// resolveTo makes name resolve to addr itself (e.g. loopback).
func (l *localHosts) resolveTo(name string, addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ips[name] = addr
}

func (l *localHosts) local(a netip.Addr) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	to, ok := l.locals[a]
	return to, ok
}

// LookupNetIP implements egress.Resolver.
func (l *localHosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a, ok := l.ips[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// hostOf is the host:port of a test server.
func hostOf(srv *httptest.Server) string { return srv.Listener.Addr().String() }

func TestDestinations_EveryRefusedOrFailedDownloadLooksTheSame(t *testing.T) {
	var loopbackHits atomic.Int32
	loopback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		loopbackHits.Add(1)
		_, _ = w.Write(makePDF(1))
	}))
	t.Cleanup(loopback.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /doc.pdf", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(makePDF(2)) })
	mux.HandleFunc("GET /to-loopback", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loopback.URL+"/doc.pdf", http.StatusFound)
	})
	mux.HandleFunc("GET /to-inside", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://inside.test/doc.pdf", http.StatusFound)
	})
	mux.HandleFunc("GET /to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("GET /hang", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	public := httptest.NewServer(mux)
	t.Cleanup(public.Close)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := closed.Addr().String()
	require.NoError(t, closed.Close())

	hosts := newLocalHosts(map[string]string{"docs.test": hostOf(public), "closed.test": closedAddr})
	hosts.resolveTo("inside.test", netip.MustParseAddr("127.0.0.1"))
	h := newHarness(t, publicNames(hosts), func(c *Config) { c.MediaTimeout = 300 * time.Millisecond })

	ok := h.sendDoc("+14155550123", "http://docs.test/doc.pdf", false)
	f := h.waitFinal(ok)
	require.Equal(t, faxapi.FaxStatusDelivered, f.Status, "a public host is reached")

	tests := []struct{ name, url string }{
		{"a public host redirecting to loopback, refused at the hop", "http://docs.test/to-loopback"},
		{"a redirect to a name resolving to loopback", "http://docs.test/to-inside"},
		{"a redirect to a file: URL", "http://docs.test/to-file"},
		{"connection refused", "http://closed.test/doc.pdf"},
		{"404", "http://docs.test/missing.pdf"},
		{"timeout", "http://docs.test/hang"},
	}
	var answers []faxapi.Fax
	for _, tt := range tests {
		id := h.sendDoc("+14155550123", tt.url, false)
		f := h.waitFinal(id)
		assert.Equal(t, faxapi.FaxStatusFailed, f.Status, tt.name)
		require.NotNil(t, f.FailureReason, tt.name)
		assert.Equal(t, faxapi.FaxFailureReasonFileDownloadFailed, *f.FailureReason, tt.name)
		answers = append(answers, f)
	}
	// Nothing but the ids, times and URLs tells them apart.
	for i, f := range answers {
		f.Id, f.CreatedAt, f.UpdatedAt, f.MediaUrl = answers[0].Id, answers[0].CreatedAt, answers[0].UpdatedAt, answers[0].MediaUrl
		assert.Equal(t, answers[0], f, tests[i].name)
	}
	assert.Zero(t, loopbackHits.Load(), "nothing reached the loopback server")
}

func TestDestinations_WebhooksToLoopbackAreRefusedAndAbandonedAndPublicOnesArrive(t *testing.T) {
	hosts := newLocalHosts(map[string]string{"docs.test": hostOf(documents(t))})
	h := newHarness(t, publicNames(hosts), func(c *Config) { c.WebhookAttempts = 2 })
	hook := newReceiver(t, h)
	u, err := url.Parse(hook.url)
	require.NoError(t, err)
	hosts.set("hooks.test", u.Host)

	// The receiver on loopback: with the default policy it is refused when
	// set, naming the field and the flag that would open it.
	resp, err := h.api.UpdateFaxApplicationWithResponse(context.Background(), h.app, faxapi.UpdateFaxApplicationJSONRequestBody{WebhookUrl: &hook.url})
	testkit.Answered(t, http.StatusUnprocessableEntity, resp, err)
	require.Len(t, resp.JSON422.Errors, 1)
	assert.Equal(t, "/webhook_url", *resp.JSON422.Errors[0].Source.Pointer)
	assert.Contains(t, resp.JSON422.Errors[0].Detail, "--fax-allow-destination "+u.Host)

	// A name that resolves to loopback only once it was set (DNS
	// rebinding): refused when a delivery connects, retried, abandoned.
	h.useReceivers("http://rebinding.test:"+u.Port()+"/", "")
	hosts.resolveTo("rebinding.test", netip.MustParseAddr("127.0.0.1"))
	refused := h.sendDoc("+14155550123", "http://docs.test/3-pages.pdf", false)
	require.Equal(t, faxapi.FaxStatusDelivered, h.waitFinal(refused).Status)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pending, abandoned int
		require.NoError(t, h.srv.store.db.QueryRowContext(context.Background(), `SELECT
			COUNT(CASE WHEN abandoned_at IS NULL AND delivered_at IS NULL THEN 1 END),
			COUNT(CASE WHEN abandoned_at IS NOT NULL THEN 1 END) FROM outbox WHERE fax_id = ?`, refused).Scan(&pending, &abandoned))
		if pending == 0 {
			assert.Equal(t, 4, abandoned, "every event was refused, retried, then abandoned")
			break
		}
		require.True(t, time.Now().Before(deadline), "events still pending")
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	assert.Empty(t, hook.typesOf(refused), "no signed POST reached loopback")

	// The same receiver reached by a public name gets every event.
	h.useReceivers("http://hooks.test/", "")
	id := h.sendDoc("+14155550123", "http://docs.test/3-pages.pdf", false)
	hook.waitFor(id, "fax.delivered")
}

func TestDestinations_RefusalsAreLoggedWithoutTheSecretsOfTheURLs(t *testing.T) {
	loopback := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(loopback.Close)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://hop-user:hop-password@"+hostOf(loopback)+"/doc.pdf?sig=hop-secret", http.StatusFound)
	}))
	t.Cleanup(redirecting.Close)
	var logs safebuf.Buffer
	h := newHarness(t, publicNames(newLocalHosts(map[string]string{"docs.test": hostOf(redirecting)})), func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	id := h.sendDoc("+14155550123", "http://doc-user:doc-password@docs.test/doc.pdf?X-Amz-Signature=media-secret", false)
	require.Equal(t, faxapi.FaxFailureReasonFileDownloadFailed, *h.waitFinal(id).FailureReason)
	h.stop()

	out := logs.String()
	require.Contains(t, out, "is a loopback address", "the log says why")
	for _, secret := range []string{"media-secret", "doc-password", "hop-secret", "hop-password"} {
		assert.NotContains(t, out, secret, "a secret of a URL is logged")
	}
}

func TestDestinations_AURLThatCanNeverPassIsRefusedWhenSet(t *testing.T) {
	loopback := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(loopback.Close)
	hosts := newLocalHosts(map[string]string{"docs.test": hostOf(documents(t))})
	hosts.resolveTo("metadata.test", netip.MustParseAddr("169.254.169.254"))
	hosts.resolveTo("private.test", netip.MustParseAddr("10.0.0.7"))
	h := newHarness(t, publicNames(hosts))
	send := func(body faxapi.SendFaxJSONRequestBody) *faxapi.SendFaxResponse {
		body.ConnectionId, body.To, body.From = h.app, "+14155550123", h.from
		if body.MediaUrl == "" {
			body.MediaUrl = "http://docs.test/3-pages.pdf"
		}
		resp, err := h.api.SendFaxWithResponse(context.Background(), body)
		require.NoError(t, err)
		return resp
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		body    faxapi.SendFaxJSONRequestBody
		pointer string
		detail  string
	}{
		{"media on loopback", faxapi.SendFaxJSONRequestBody{MediaUrl: loopback.URL + "/doc.pdf"}, "/media_url", "--fax-allow-destination " + hostOf(loopback)},
		{"media at the metadata address", faxapi.SendFaxJSONRequestBody{MediaUrl: "http://169.254.169.254/latest/meta-data/"}, "/media_url", "never reachable"},
		{"media named to the metadata address", faxapi.SendFaxJSONRequestBody{MediaUrl: "http://metadata.test/x"}, "/media_url", "never reachable"},
		{"webhook on a private address", faxapi.SendFaxJSONRequestBody{WebhookUrl: str("http://private.test:8080/hook")}, "/webhook_url", "--fax-allow-private-destinations"},
		{"failover on IPv6 link-local", faxapi.SendFaxJSONRequestBody{WebhookFailoverUrl: str("http://[fe80::1]/hook")}, "/webhook_failover_url", "never reachable"},
	}
	for _, tt := range tests {
		resp := send(tt.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode(), tt.name)
		require.Len(t, resp.JSON422.Errors, 1, tt.name)
		assert.Equal(t, tt.pointer, *resp.JSON422.Errors[0].Source.Pointer, tt.name)
		assert.Contains(t, resp.JSON422.Errors[0].Detail, tt.detail, tt.name)
	}
	create, err := h.api.CreateFaxApplicationWithResponse(context.Background(), faxapi.CreateFaxApplicationJSONRequestBody{
		ApplicationName: "metadata", WebhookUrl: "http://169.254.169.254/hook",
	})
	testkit.Answered(t, http.StatusUnprocessableEntity, create, err)
	assert.Equal(t, "/webhook_url", *create.JSON422.Errors[0].Source.Pointer)
	assert.Equal(t, http.StatusAccepted, send(faxapi.SendFaxJSONRequestBody{}).StatusCode(), "a public media URL passes")
}

func TestDestinations_LoopbackAllowedPassesAndMetadataStillNot(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(hook.Close)
	h := newHarness(t, func(c *Config) { c.Destinations = egress.Options{AllowLoopback: true} })
	h.useReceivers(hook.URL+"/hook", "")
	resp, err := h.api.UpdateFaxApplicationWithResponse(context.Background(), h.app, faxapi.UpdateFaxApplicationJSONRequestBody{
		WebhookFailoverUrl: func() *string { s := "http://[fd00:ec2::254]/"; return &s }(),
	})
	testkit.Answered(t, http.StatusUnprocessableEntity, resp, err)
	assert.Equal(t, "/webhook_failover_url", *resp.JSON422.Errors[0].Source.Pointer)
}

func TestDelivery_FailuresAreLoggedWithoutTheSecretsOfTheURLs(t *testing.T) {
	var logs safebuf.Buffer
	h := newHarness(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	failover := newReceiver(t, h)
	// Port 9 (discard) refuses connections: every attempt on the webhook URL
	// fails and is logged.
	h.useReceivers("http://hook-user:hook-password@127.0.0.1:9/?token=primary-secret", failover.url+"?token=failover-secret")

	id := h.send("+14155550123")
	failover.waitFor(id, "fax.delivered")
	h.stop()

	out := logs.String()
	require.True(t, strings.Contains(out, "giving up on a URL"), "the failures are logged:\n%s", out)
	for _, secret := range []string{"primary-secret", "hook-password", "failover-secret"} {
		assert.NotContains(t, out, secret, "a secret of a webhook URL is logged")
	}
}

func TestSend_DownloadFailuresAreLoggedWithoutTheSecretsOfTheMediaURL(t *testing.T) {
	var logs safebuf.Buffer
	h := newHarness(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	r := newReceiver(t, h)
	h.useReceivers(r.url, "")

	// A presigned document URL whose server refuses connections.
	id := h.sendDoc("+14155550123", "http://doc-user:doc-password@127.0.0.1:9/fax.pdf?X-Amz-Signature=media-secret", false)
	r.waitFor(id, "fax.failed")
	h.stop()

	out := logs.String()
	require.True(t, strings.Contains(out, "download failed"), "the failure is logged:\n%s", out)
	for _, secret := range []string{"media-secret", "doc-password"} {
		assert.NotContains(t, out, secret, "a secret of the media URL is logged")
	}
}
