// Package harproxy is `apistack proxy`: a reverse proxy (or, for traffic
// whose signature names the real host, a forward HTTP proxy) in front of a
// real service that passes every request and answer on unchanged and
// streamed, checks each exchange against the API's spec with the validator
// the tests use (clients/contract), and records the exchanges as HAR 1.2
// (servers/internal/har) with each one's operation and violations.
//
// Bodies are kept for the check and the record up to a cap per body (the
// rest streams through uncounted), so memory stays bounded whatever the
// traffic; a body cut at the cap is recorded cut, the cut stated in the
// HAR, and its exchange is checked but for that body.
package harproxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"golang.org/x/sync/semaphore"

	"github.com/apistack/apistack/clients/contract"
	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/servers/internal/har"
	"github.com/apistack/apistack/servers/internal/validation"
)

// ReportPath is where the proxy serves its live summary, on its own address.
const ReportPath = "/_apistack/report"

// DefaultBodyCap is the most bytes of one body kept by default.
const DefaultBodyCap = 1 << 20

// DefaultBodyMemory is the most bytes of the bodies of every exchange in
// flight kept at once by default.
const DefaultBodyMemory = 256 << 20

// WebhookTolerance is how far a webhook's timestamp may be from the clock.
const WebhookTolerance = 5 * time.Minute

// Config configures a Proxy.
type Config struct {
	// API is the spec the traffic is held to: contract.PAM, Fax, Storage,
	// Restaurant, or FaxWebhooks for deliveries to a webhook receiver.
	API contract.API
	// Upstream is where requests go (the real service, or the receiver);
	// nil in forward mode.
	Upstream *url.URL
	// Forward makes the proxy a forward HTTP proxy: each request names its
	// own absolute URL and goes there with its Host unchanged, so a
	// signature made for that host still holds.
	Forward bool
	// WebhookPublicKey, with API FaxWebhooks, verifies each delivery's
	// Ed25519 signature (nil only checks one is present).
	WebhookPublicKey ed25519.PublicKey
	// Record receives each exchange as a HAR entry (nil records nothing).
	Record *har.Writer
	// BodyCap is the most bytes of one body kept (DefaultBodyCap when 0).
	BodyCap int64
	// BodyMemory is the most bytes of the bodies of all the exchanges in
	// flight kept at once (DefaultBodyMemory when 0): a body that finds
	// it spent is kept no further, and recorded cut, so memory stays
	// bounded whatever the number of exchanges at once.
	BodyMemory int64
	// Transport sends the requests; nil is a transport of the proxy's own
	// that never decompresses (the answer is passed on as it came) and
	// ignores the environment's proxy settings.
	Transport http.RoundTripper
	// Logger logs upstream failures (slog.Default when nil).
	Logger *slog.Logger
	// Now is the clock webhook timestamps are judged by (time.Now when nil).
	Now func() time.Time
}

// Proxy is the proxy's http.Handler.
type Proxy struct {
	cfg     Config
	checker *contract.Transport
	rp      *httputil.ReverseProxy
	report  *Report
	// queue holds the answered exchanges waiting to be checked and
	// recorded, off the handlers' path; it is bounded (a handler that finds
	// it full waits), so the kept bodies are bounded too. Up to maxWorkers
	// workers drain it, each started when an exchange finds fewer at work
	// and ending when it has found the queue empty for workerLinger; a
	// worker lives on while traffic flows, so the validator's deep calls
	// find its stack grown.
	queue      chan *exchange
	mu         sync.Mutex
	workers    int
	maxWorkers int
	pending    sync.WaitGroup
	// memory holds the bytes of the bodies kept (Config.BodyMemory).
	memory *semaphore.Weighted
}

// New returns a Proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Forward == (cfg.Upstream != nil) {
		return nil, errors.New("harproxy: give an upstream, or forward mode, not both")
	}
	if cfg.Upstream != nil && (cfg.Upstream.Scheme != "http" && cfg.Upstream.Scheme != "https" || cfg.Upstream.Host == "") {
		return nil, fmt.Errorf("harproxy: upstream %q is not an http(s) URL", cfg.Upstream)
	}
	if cfg.BodyCap <= 0 {
		cfg.BodyCap = DefaultBodyCap
	}
	if cfg.BodyMemory <= 0 {
		cfg.BodyMemory = DefaultBodyMemory
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		t.DisableCompression = true
		t.MaxIdleConnsPerHost = 256
		cfg.Transport = t
	}
	var opts []contract.Option
	if cfg.API == contract.FaxWebhooks && cfg.WebhookPublicKey != nil {
		opts = append(opts, contract.WithCredentialCheck(func(scheme *openapi3.SecurityScheme, req *http.Request, body []byte) error {
			return faxclient.VerifySignature(cfg.WebhookPublicKey, req.Header.Get("Webhook-Timestamp"),
				req.Header.Get("Webhook-Signature-Ed25519"), body, cfg.Now(), WebhookTolerance)
		}))
	}
	checker, err := newChecker(cfg.API, opts...)
	if err != nil {
		return nil, fmt.Errorf("harproxy: %w", err)
	}
	procs := runtime.GOMAXPROCS(0)
	p := &Proxy{cfg: cfg, checker: checker, report: newReport(), queue: make(chan *exchange, procs), maxWorkers: procs,
		memory: semaphore.NewWeighted(cfg.BodyMemory)}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      cfg.Transport,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.upstreamFailed,
		ErrorLog:       slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
		BufferPool:     copyBuffers,
	}
	return p, nil
}

// newChecker is the contract checker of api, reading JSON bodies as the
// servers' validation does (validation.StrictJSONDecoder: duplicate
// members, trailing data and deep nesting refused), which the tests'
// checker does too once a server is built in their process: the proxy and
// conform --har hold traffic to the spec exactly as the tests hold the
// stand-ins. It also reads a body in about half encoding/json's time
// (validation.BenchmarkDecodeJSON).
func newChecker(api contract.API, opts ...contract.Option) (*contract.Transport, error) {
	validation.RegisterDecoders()
	return contract.ForAPI(api, nil, opts...)
}

// copyBuffers lends ReverseProxy the buffers it streams answers through:
// without a pool it allocates 32 KiB for every answer.
var copyBuffers httputil.BufferPool = &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}

type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte  { return *b.pool.Get().(*[]byte) }
func (b *bufferPool) Put(x []byte) { b.pool.Put(&x) }

// Report is the live summary.
func (p *Proxy) Report() Summary { return p.report.Summary() }

// Wait returns once every exchange answered so far is checked and recorded.
func (p *Proxy) Wait() { p.pending.Wait() }

type exchangeKey struct{}

// exchange is what the proxy learns of one exchange as it passes.
type exchange struct {
	start, end time.Time
	waited     time.Duration
	method     string
	url        *url.URL
	proto      string
	header     http.Header
	reqBody    *capture

	answered   bool
	status     int
	statusText string
	respProto  string
	respHeader http.Header
	respBody   *capture
	err        error
}

// ServeHTTP passes r on and records the exchange.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ReportPath && !r.URL.IsAbs() {
		p.serveReport(w, r)
		return
	}
	if r.Method == http.MethodConnect {
		http.Error(w, "apistack proxy does not tunnel https (CONNECT): checking https traffic would need it to "+
			"intercept TLS with a certificate the client trusts, which it does not do; record https traffic with a "+
			"recorder that does (mitmproxy, a browser) and check the HAR with `apistack conform --har`", http.StatusNotImplemented)
		return
	}
	if p.cfg.Forward && !r.URL.IsAbs() {
		http.Error(w, "apistack proxy in forward mode: send it requests for absolute http:// URLs (set HTTP_PROXY)", http.StatusBadRequest)
		return
	}
	target := *r.URL
	if p.cfg.Forward {
		target.Host = r.Host
	} else {
		target.Scheme, target.Host = p.cfg.Upstream.Scheme, p.cfg.Upstream.Host
		target.Path = singleJoin(p.cfg.Upstream.Path, r.URL.Path)
		target.RawPath = ""
	}
	// r.Header is kept as it is: ReverseProxy sends a copy of the request
	// and never changes the one it was given, nor does the server once
	// the handler has returned.
	x := &exchange{start: time.Now(), method: r.Method, url: &target, proto: r.Proto, header: r.Header}
	if r.Body != nil && r.Body != http.NoBody {
		x.reqBody = &capture{rc: r.Body, limit: p.cfg.BodyCap, memory: p.memory}
		r.Body = x.reqBody
	}
	r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x))
	// The request body streams to the upstream while the answer streams
	// back: without full duplex, the server would end the request body as
	// the answer starts, before the transport has read its end, and the
	// upstream connection would be dropped mid-answer.
	_ = http.NewResponseController(w).EnableFullDuplex()
	p.serve(w, r, x)
	x.end = time.Now()
	p.record(x)
}

// record queues x to be checked and recorded off the handler's path,
// waiting while the queue is full, and makes sure a worker will take it.
func (p *Proxy) record(x *exchange) {
	p.pending.Add(1)
	p.queue <- x
	// Counted under the lock after the send: a worker that found the
	// queue empty and ended has counted itself out first, so x never waits
	// for a worker that is gone.
	p.mu.Lock()
	start := p.workers < p.maxWorkers
	if start {
		p.workers++
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
}

// workerLinger is how long a worker waits for the next exchange once it
// finds the queue empty before it ends: under steady traffic the queue
// empties between exchanges all the time, and a worker started anew each
// time would grow its stack again for the validator's deep calls.
var workerLinger = 500 * time.Millisecond

// work checks and records queued exchanges until it has found none for
// workerLinger.
func (p *Proxy) work() {
	linger := workerLinger
	idle := time.NewTimer(linger)
	defer idle.Stop()
	for {
		select {
		case x := <-p.queue:
			p.finish(x)
			x.reqBody.release()
			x.respBody.release()
			p.pending.Done()
			idle.Reset(linger)
		case <-idle.C:
			p.mu.Lock()
			if len(p.queue) > 0 {
				p.mu.Unlock()
				idle.Reset(linger)
				continue
			}
			p.workers--
			p.mu.Unlock()
			return
		}
	}
}

// serve proxies r. An answer that breaks off while streaming aborts the
// handler (http.ErrAbortHandler, so the client sees it cut); the exchange
// is recorded first, with its error.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, x *exchange) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			x.end = time.Now()
			if x.err == nil {
				x.err = errors.New("the answer broke off")
			}
			p.record(x)
			panic(v)
		}
	}()
	p.rp.ServeHTTP(w, r)
}

// singleJoin is the upstream's path a followed by the request's b; b "/"
// is a itself (a webhook receiver's URL is posted to exactly).
func singleJoin(a, b string) string {
	if a == "" || a == "/" {
		return b
	}
	if b == "" || b == "/" {
		return a
	}
	return strings.TrimSuffix(a, "/") + "/" + strings.TrimPrefix(b, "/")
}

// rewrite sends the request on as it came: to the upstream (its Host the
// upstream's), or in forward mode to its own URL and Host; headers a client
// sent that ReverseProxy would drop (X-Forwarded-*) are kept, and none added.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	x := pr.In.Context().Value(exchangeKey{}).(*exchange)
	pr.Out.URL = x.url
	if p.cfg.Forward {
		pr.Out.Host = pr.In.Host
	} else {
		pr.Out.Host = ""
	}
	for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded"} {
		if v, ok := pr.In.Header[h]; ok {
			pr.Out.Header[h] = v
		}
	}
}

// modifyResponse notes the answer and keeps its body as it streams through.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	x := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	x.answered = true
	x.waited = time.Since(x.start)
	x.status, x.statusText, x.respProto = resp.StatusCode, resp.Status, resp.Proto
	// Kept, not copied: ReverseProxy has dropped the hop-by-hop headers
	// already and only reads the rest from here on.
	x.respHeader = resp.Header
	x.respBody = &capture{rc: resp.Body, limit: p.cfg.BodyCap, memory: p.memory}
	resp.Body = x.respBody
	return nil
}

// upstreamFailed answers 502 when no answer came.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	x := r.Context().Value(exchangeKey{}).(*exchange)
	if x.answered {
		// The answer broke off while streaming: its status is sent already.
		x.err = err
		return
	}
	x.err = err
	p.cfg.Logger.Warn("apistack proxy: upstream failed", "method", r.Method, "url", har.RedactURL(x.url).String(), "err", err)
	http.Error(w, "apistack proxy: upstream: "+err.Error(), http.StatusBadGateway)
}

func (p *Proxy) serveReport(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p.report.Summary())
}

// finish checks and records one exchange.
func (p *Proxy) finish(x *exchange) {
	reqBody, reqCut, reqSize := x.reqBody.result()
	check := &Exchange{
		Request:     p.checkedRequest(x, reqBody),
		RequestBody: reqBody,
		RequestCut:  reqCut,
		Answered:    x.answered,
		Status:      x.status,
		Header:      x.respHeader,
	}
	entry := &har.Entry{
		StartedDateTime: har.DateTime(x.start),
		Time:            har.Millis(x.end.Sub(x.start)),
		Timings:         har.Timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Wait: har.Millis(x.waited), Receive: har.Millis(x.end.Sub(x.start) - x.waited)},
		Request:         p.harRequest(x, reqBody, reqCut, reqSize),
	}
	if x.err != nil {
		entry.Error = "upstream: " + x.err.Error()
	}
	if x.answered {
		body, cut, size := x.respBody.result()
		decoded, note, whole := decode(x.respHeader.Get("Content-Encoding"), body, cut, p.cfg.BodyCap)
		check.ResponseBody, check.ResponseUnread = decoded, !whole || x.err != nil
		if x.respBody.short() {
			note = cutNote(p.cfg.BodyCap, size, true)
		}
		entry.Response = harResponse(x, decoded, size, note, cut || !whole, p.cfg.BodyCap)
	} else {
		entry.Response = har.Response{Status: 0, HTTPVersion: "", Cookies: []har.Cookie{}, Headers: []har.NameValue{},
			Content: har.Content{MimeType: "x-unknown"}, HeadersSize: -1, BodySize: -1}
	}
	entry.Operation, entry.Violations = Check(context.Background(), p.checker, check)
	if p.cfg.Record != nil {
		if err := p.cfg.Record.Append(entry); err != nil && !errors.Is(err, har.ErrClosed) {
			p.cfg.Logger.Error("apistack proxy: record", "err", err)
		}
	}
	// Counted once recorded: the live summary never counts an exchange
	// the file does not hold yet.
	p.report.add(entry.Operation, len(entry.Violations), x.err != nil)
}

// checkedRequest is the request as the checker routes it: path style for a
// virtual-host-style storage request.
func (p *Proxy) checkedRequest(x *exchange, body []byte) *http.Request {
	u := *x.url
	req := &http.Request{Method: x.method, URL: &u, Header: x.header, Host: x.url.Host, Proto: x.proto,
		Body: http.NoBody, ContentLength: int64(len(body))}
	if p.cfg.Forward {
		req.Host = x.url.Host
	}
	switch p.cfg.API {
	case contract.Storage:
		PathStyle(req)
	case contract.FaxWebhooks:
		// The receiving endpoint is the whole URL: the spec's one path.
		req.URL.Path, req.URL.RawPath = "/", ""
	}
	// A request made so has no context of its own: its Context is
	// context.Background().
	return req
}

// PathStyle rewrites a virtual-host-style storage request
// ({bucket}.{region}.{domain}/…) to path style (/{bucket}/…), as the
// storage server routes it: a host of three labels or more whose first
// label is not an IP address's.
func PathStyle(req *http.Request) {
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if net.ParseIP(host) != nil {
		return
	}
	labels := strings.Split(host, ".")
	if len(labels) < 3 {
		return
	}
	req.URL.Path = "/" + labels[0] + req.URL.Path
	if req.URL.Path == "/"+labels[0]+"/" {
		req.URL.Path = "/" + labels[0]
	}
}

// harRequest is x's request as a HAR records it, secrets redacted.
func (p *Proxy) harRequest(x *exchange, body []byte, cut bool, size int64) har.Request {
	u := har.RedactURL(x.url)
	r := har.Request{
		Method: x.method, URL: u.String(), HTTPVersion: protoOr(x.proto), Cookies: []har.Cookie{},
		Headers: har.Headers(x.header), QueryString: har.QueryString(u), HeadersSize: -1, BodySize: size,
	}
	if x.reqBody != nil {
		text, enc := har.BodyText(har.RedactBody(body))
		r.PostData = &har.PostData{MimeType: contentType(x.header), Text: text, Encoding: enc, Truncated: cut}
		if cut {
			r.PostData.Comment = cutNote(p.cfg.BodyCap, size, x.reqBody.short())
		}
	}
	return r
}

func harResponse(x *exchange, body []byte, wireSize int64, note string, cut bool, limit int64) har.Response {
	text, enc := har.BodyText(har.RedactBody(body))
	c := har.Content{Size: int64(len(body)), MimeType: contentType(x.respHeader), Text: text, Encoding: enc, Comment: note, Truncated: cut}
	if cut {
		c.Size = wireSize
		if c.Comment == "" {
			c.Comment = cutNote(limit, wireSize, false)
		}
	} else if x.respHeader.Get("Content-Encoding") != "" {
		c.Compression = int64(len(body)) - wireSize
	}
	statusText := strings.TrimSpace(strings.TrimPrefix(x.statusText, strconv.Itoa(x.status)))
	return har.Response{
		Status: x.status, StatusText: statusText, HTTPVersion: protoOr(x.respProto), Cookies: []har.Cookie{},
		Headers: har.Headers(x.respHeader), Content: c, RedirectURL: x.respHeader.Get("Location"),
		HeadersSize: -1, BodySize: wireSize,
	}
}

func cutNote(limit, size int64, short bool) string {
	if short {
		return fmt.Sprintf("body cut short (it had %d bytes): the proxy's memory for the bodies in flight was in use; not checked against the spec", size)
	}
	return fmt.Sprintf("body cut at the recording's cap of %d bytes per body (it had %d bytes); not checked against the spec", limit, size)
}

func contentType(h http.Header) string {
	if ct := h.Get("Content-Type"); ct != "" {
		return ct
	}
	return "x-unknown"
}

func protoOr(p string) string {
	if p == "" {
		return "HTTP/1.1"
	}
	return p
}

// decode is a body as its Content-Encoding left it decoded: whole reports
// it is the whole body, decoded; note says why not.
func decode(encoding string, body []byte, cut bool, limit int64) (decoded []byte, note string, whole bool) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return body, "", !cut
	case "gzip", "x-gzip":
		if cut {
			return body, fmt.Sprintf("gzip body cut at the recording's cap of %d bytes: kept as sent, not checked", limit), false
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return body, "gzip body that does not decode: kept as sent", false
		}
		out, err := io.ReadAll(io.LimitReader(zr, limit+1))
		if err != nil || int64(len(out)) > limit {
			return body, "gzip body that does not decode within the recording's cap: kept as sent, not checked", false
		}
		return out, "", true
	}
	return body, fmt.Sprintf("body encoded %s: kept as sent, not checked", encoding), false
}

// capture keeps the first limit bytes read through it, as far as memory
// allows.
type capture struct {
	rc     io.ReadCloser
	limit  int64
	memory *semaphore.Weighted

	mu   sync.Mutex
	buf  []byte
	n    int64
	done bool
	// starved: memory was spent, so the body was kept no further.
	starved bool
	// released: the exchange is recorded; nothing more is kept.
	released bool
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	c.mu.Lock()
	if room := c.limit - int64(len(c.buf)); room > 0 && n > 0 && !c.starved && !c.released {
		k := min(int64(n), room)
		if c.memory.TryAcquire(k) {
			c.buf = append(c.buf, p[:k]...)
		} else {
			c.starved = true
		}
	}
	c.n += int64(n)
	if err == io.EOF {
		c.done = true
	}
	c.mu.Unlock()
	return n, err
}

func (c *capture) Close() error { return c.rc.Close() }

// result is what was kept, whether the body was cut (over the cap, short
// of memory, or not read to its end) and how many bytes passed.
func (c *capture) result() (body []byte, cut bool, size int64) {
	if c == nil {
		return nil, false, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.n > int64(len(c.buf)) || !c.done, c.n
}

// short reports a body cut because memory was spent, not at the cap.
func (c *capture) short() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starved
}

// release gives back the memory of the body kept; nothing is kept after.
func (c *capture) release() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.released {
		c.released = true
		c.memory.Release(int64(len(c.buf)))
		c.buf = nil
	}
}
