package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/gen/faxserver"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/gen/restaurantserver"
	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/internal/heaptest"
	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
	"github.com/apistack/apistack/servers/internal/validation"
)

const mib = 1 << 20

// gateAt is how much of a gatedBody is sent before it blocks.
const gateAt = 1 << 10

// gatedBody sends its first gateAt bytes at once and then blocks until
// release is closed (and then ends, short of its declared size): a server that
// answers while the gate is shut answered without reading the body.
type gatedBody struct {
	release chan struct{}
	blocked chan struct{} // closed when the gate is reached
	once    sync.Once
	sent    atomic.Int64
}

func newGatedBody() *gatedBody {
	return &gatedBody{release: make(chan struct{}), blocked: make(chan struct{})}
}

func (g *gatedBody) Read(p []byte) (int, error) {
	sent := g.sent.Load()
	if sent >= gateAt {
		g.once.Do(func() { close(g.blocked) })
		<-g.release
		return 0, io.ErrUnexpectedEOF
	}
	n := min(int64(len(p)), gateAt-sent)
	for i := range p[:n] {
		p[i] = ' '
	}
	g.sent.Add(n)
	return int(n), nil
}

// bodyTarget is one API's operation that takes a body, with what it answers
// a caller who is not authenticated.
type bodyTarget struct {
	api         string
	method, url string
	contentType string
	header      http.Header
	status      int
	// errorText is in the body of the refusal (the API's own error shape).
	errorText string
	// from is the loopback address (127.0.0.x) the requests come from; ""
	// is the default. orStatus, when not 0, is another refusal accepted:
	// 429 for wrong admin tokens once their source has used up its share.
	from     string
	orStatus int
}

// fromKey is the context key of the source address roundTrip dials from.
type fromKey struct{}

// unauthenticatedTargets are, per API, a secured operation sent without
// credentials (or with wrong ones).
func unauthenticatedTargets(creds map[string]map[string]string) []bodyTarget {
	guid := creds["restaurant"]["restaurant_guid"]
	return []bodyTarget{
		{api: "pam", method: http.MethodPost, url: creds["pam"]["base_url"] + "/v1/teams/demo/groups",
			contentType: "application/json", status: http.StatusUnauthorized, errorText: "authentication_error"},
		{api: "pam wrong token", method: http.MethodPost, url: creds["pam"]["base_url"] + "/v1/teams/demo/groups",
			contentType: "application/json", header: http.Header{"Authorization": {"Bearer not-a-token"}},
			status: http.StatusUnauthorized, errorText: "authentication_error"},
		{api: "fax", method: http.MethodPost, url: creds["fax"]["base_url"] + "/v2/faxes",
			contentType: "application/x-www-form-urlencoded", status: http.StatusUnauthorized, errorText: "errors"},
		{api: "restaurant", method: http.MethodGet, url: creds["restaurant"]["base_url"] + "/config/v2/menus",
			contentType: "application/json", header: http.Header{"Platform-Restaurant-External-Id": {guid}},
			status: http.StatusUnauthorized, errorText: "AUTHENTICATION_REQUIRED"},
		{api: "admin", method: http.MethodPut, url: creds["admin"]["base_url"] + "/restaurant/restaurants/" + guid + "/configuration",
			contentType: "application/json", status: http.StatusUnauthorized, errorText: "unauthorized"},
		// Wrong admin tokens come from a source of their own: past 10 it is
		// refused 429 (still unread), and the other tests' source is not.
		{api: "admin wrong token", method: http.MethodPut, url: creds["admin"]["base_url"] + "/restaurant/restaurants/" + guid + "/configuration",
			contentType: "application/json", header: http.Header{"Authorization": {"Bearer adm_wrong"}},
			status: http.StatusUnauthorized, errorText: "unauthorized", from: "127.0.0.9", orStatus: http.StatusTooManyRequests},
		{api: "storage", method: http.MethodPut, url: creds["storage"]["endpoint"] + "/" + creds["storage"]["bucket"] + "?lifecycle=",
			contentType: "application/xml", status: http.StatusForbidden, errorText: "AccessDenied"},
	}
}

func (tg bodyTarget) request(t testing.TB, body io.Reader, contentLength int64) *http.Request {
	t.Helper()
	req, err := http.NewRequest(tg.method, tg.url, body)
	require.NoError(t, err)
	req.ContentLength = contentLength
	req.Header.Set("Content-Type", tg.contentType)
	if tg.from != "" {
		req = req.WithContext(context.WithValue(req.Context(), fromKey{}, tg.from))
	}
	for k, v := range tg.header {
		req.Header[k] = v
	}
	return req
}

// answer is what a request sent in the background came back with.
type answer struct {
	status int
	header http.Header
	body   string
	err    error
}

func sendInBackground(req *http.Request) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		resp, body, err := roundTrip(req)
		if err != nil {
			out <- answer{err: err}
			return
		}
		out <- answer{status: resp.StatusCode, header: resp.Header, body: string(body)}
	}()
	return out
}

// roundTrip sends req on a connection of its own and reads the answer while
// the body is still being written. A server that answers and closes without
// reading the body makes the write fail; http.Transport reports whichever of
// the failed write and the answer it sees first, and under load that can be
// the write, while the answer is there to be read.
func roundTrip(req *http.Request) (*http.Response, []byte, error) {
	var d net.Dialer
	if from, ok := req.Context().Value(fromKey{}).(string); ok {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	conn, err := d.Dial("tcp", req.URL.Host)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	go func() { _ = req.Write(conn) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// requireAnsweredWhileGated sends req, whose body is g, and requires the
// answer to arrive while g holds the rest of the body back.
func requireAnsweredWhileGated(t *testing.T, req *http.Request, g *gatedBody) answer {
	t.Helper()
	defer close(g.release)
	select {
	case a := <-sendInBackground(req):
		require.NoError(t, a.err)
		assert.LessOrEqual(t, g.sent.Load(), int64(gateAt), "answered while the rest of the body was held back")
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("no answer while the body was held back: the server waits for the body")
		return answer{}
	}
}

func TestBodies_RefusedUnreadOnEveryAPI(t *testing.T) {
	creds, _, stop := startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()

	t.Run("unauthenticated", func(t *testing.T) {
		for _, tg := range unauthenticatedTargets(creds) {
			for _, size := range []struct {
				name string
				n    int64
			}{
				{"60 MB declared", 60_000_000},
				{"1 MiB declared", mib},
				{"chunked", -1},
			} {
				t.Run(tg.api+"/"+size.name, func(t *testing.T) {
					g := newGatedBody()
					a := requireAnsweredWhileGated(t, tg.request(t, g, size.n), g)
					assert.Equal(t, tg.status, a.status, a.body)
					assert.Contains(t, a.body, tg.errorText)
					assertAnswerInSpec(t, tg, a)
				})
			}
		}
	})

	t.Run("fifty concurrent unauthenticated MiB bodies allocate little", func(t *testing.T) {
		payload := bytes.Repeat([]byte(" "), mib)
		for _, tg := range unauthenticatedTargets(creds) {
			t.Run(tg.api, func(t *testing.T) {
				const n = 50
				start := time.Now()
				allocated := sendConcurrently(t, tg, payload, n)
				perRequest := allocated / n
				t.Logf("%s: %d refused 1 MiB bodies in %v, %d KiB allocated in all, %d KiB each",
					tg.api, n, time.Since(start).Round(time.Millisecond), allocated>>10, perRequest>>10)
				assert.Less(t, perRequest, uint64(maxAllocPerRefusedBody), "bytes allocated per refused request")
			})
		}
	})

	// A caller who passes gets its body capped at the operation's limit:
	// refused unread when the declared length is over it, and refused with
	// the same 413 (never a 500) when a body of undeclared length reads past it.
	t.Run("authenticated over the limit", func(t *testing.T) {
		for _, tg := range authenticatedTargets(t, creds) {
			t.Run(tg.api+"/declared", func(t *testing.T) {
				g := newGatedBody()
				a := requireAnsweredWhileGated(t, tg.request(t, g, tg.limit+1), g)
				assert.Equal(t, http.StatusRequestEntityTooLarge, a.status, a.body)
				assert.Contains(t, a.body, tg.errorText)
				assert.Contains(t, a.body, fmt.Sprint(tg.limit))
				assertAnswerInSpec(t, tg.bodyTarget, a)
			})
			t.Run(tg.api+"/chunked", func(t *testing.T) {
				body := io.MultiReader(strings.NewReader(tg.bodyStart), strings.NewReader(strings.Repeat(" ", int(tg.limit))))
				a := <-sendInBackground(tg.request(t, body, -1))
				require.NoError(t, a.err)
				assert.Equal(t, http.StatusRequestEntityTooLarge, a.status, a.body)
				assert.Contains(t, a.body, tg.errorText)
				assertAnswerInSpec(t, tg.bodyTarget, a)
			})
		}
	})
}

// maxAllocPerRefusedBody bounds what the whole process (client and servers)
// allocates per refused 1 MiB body: a quarter of the body, so a server that
// read or decoded bodies before refusing them could not stay under it.
const maxAllocPerRefusedBody = mib / 4

// sendConcurrently sends n requests of payload to tg at once, requires each
// to be answered tg.status, and returns the bytes the process allocated
// meanwhile.
func sendConcurrently(t *testing.T, tg bodyTarget, payload []byte, n int) uint64 {
	t.Helper()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = tg.request(t, bytes.NewReader(payload), int64(len(payload)))
	}
	jobs := make([]func() error, n)
	for i, req := range reqs {
		jobs[i] = func() error {
			resp, _, err := roundTrip(req)
			if err != nil {
				return err
			}
			if resp.StatusCode != tg.status && (tg.orStatus == 0 || resp.StatusCode != tg.orStatus) {
				return errors.New("answered " + resp.Status)
			}
			return nil
		}
	}
	allocated, errs := heaptest.Concurrently(jobs)
	require.Empty(t, errs)
	return allocated
}

// limitTarget is an authenticated operation with its body limit.
type limitTarget struct {
	bodyTarget
	limit int64
	// bodyStart opens a body the operation would decode, so a chunked body
	// is read up to the limit.
	bodyStart string
}

// authenticatedTargets are, per API, an operation called with valid
// credentials and its body limit.
func authenticatedTargets(t *testing.T, creds map[string]map[string]string) []limitTarget {
	t.Helper()
	guid := creds["restaurant"]["restaurant_guid"]
	bearer := func(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }
	return []limitTarget{
		{bodyTarget: bodyTarget{api: "pam", method: http.MethodPost, url: creds["pam"]["base_url"] + "/v1/teams/demo/groups",
			contentType: "application/json", header: bearer(pamToken(t, creds["pam"])), errorText: "invalid_request"},
			limit: 64 << 10, bodyStart: `{"name": "`},
		{bodyTarget: bodyTarget{api: "fax", method: http.MethodPost, url: creds["fax"]["base_url"] + "/v2/faxes",
			contentType: "application/x-www-form-urlencoded", header: bearer(creds["fax"]["api_key"]), errorText: "request_too_large"},
			limit: 64 << 10, bodyStart: "to=%2B13125550000&media_url="},
		// Restaurant's only body is the login, open to all: its limit is the cap.
		{bodyTarget: bodyTarget{api: "restaurant", method: http.MethodPost, url: creds["restaurant"]["base_url"] + "/authentication/v1/authentication/login",
			contentType: "application/json", errorText: "REQUEST_TOO_LARGE"},
			limit: 16 << 10, bodyStart: `{"clientId": "`},
		{bodyTarget: bodyTarget{api: "admin", method: http.MethodPost, url: creds["admin"]["base_url"] + "/pam/teams",
			contentType: "application/json", header: bearer(creds["admin"]["token"]), errorText: "invalid_request"},
			limit: 1 << 20, bodyStart: `{"name": "`},
		{bodyTarget: bodyTarget{api: "admin configuration import", method: http.MethodPut,
			url:         creds["admin"]["base_url"] + "/restaurant/restaurants/" + guid + "/configuration",
			contentType: "application/json", header: bearer(creds["admin"]["token"]), errorText: "invalid_request"},
			limit: 32 << 20, bodyStart: `{"menus": [`},
	}
}

// pamToken exchanges the demo key for a bearer token.
func pamToken(t *testing.T, pam map[string]string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"key_id": pam["key_id"], "key_secret": pam["key_secret"]})
	resp, err := http.Post(pam["base_url"]+"/v1/teams/"+url.PathEscape(pam["team"])+"/service_token", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var tok struct {
		BearerToken string `json:"bearer_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))
	return tok.BearerToken
}

// specs are the OpenAPI documents of the APIs whose answers are JSON, by the
// first word of a target's api.
var specs = map[string]func() (*openapi3.T, error){
	"pam": pamserver.GetSpec, "fax": faxserver.GetSpec, "restaurant": restaurantserver.GetSpec, "admin": adminserver.GetSpec,
}

// assertAnswerInSpec checks a's status, headers and body against the
// operation tg calls, as the contract tests do: every refusal is one the
// spec declares. (Storage's XML answers are checked by its own tests.)
func assertAnswerInSpec(t *testing.T, tg bodyTarget, a answer) {
	t.Helper()
	name, _, _ := strings.Cut(tg.api, " ")
	getSpec, ok := specs[name]
	if !ok {
		return
	}
	spec, err := getSpec()
	require.NoError(t, err)
	router, err := validation.NewRouter(spec)
	require.NoError(t, err)
	req, err := http.NewRequest(tg.method, tg.url, nil)
	require.NoError(t, err)
	route, params, err := router.FindRoute(req)
	require.NoError(t, err)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 a.status,
		Header:                 a.header,
		Options:                &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true},
	}
	in.SetBodyBytes([]byte(a.body))
	assert.NoError(t, openapi3filter.ValidateResponse(context.Background(), in), "the %d answer of %s %s is in its spec", a.status, tg.method, tg.url)
}

// stalledAnswer sends tg's request with a Content-Length of 4 KiB, writes
// only start, and waits for the answer the server gives once its read
// timeout passes.
func stalledAnswer(t *testing.T, tg bodyTarget, start string) answer {
	t.Helper()
	req := tg.request(t, nil, 4096)
	return rawStalled(t, req, start)
}

// rawStalled writes req's head with its Content-Length and then start of
// the body, and reads the answer.
func rawStalled(t *testing.T, req *http.Request, start string) answer {
	t.Helper()
	return rawExchange(t, req, "length", start, false)
}

// signedStalledPut is a lifecycle PUT signed for a 4 KiB body, of which
// only the start will be sent.
func signedStalledPut(t *testing.T, sc map[string]string) *http.Request {
	t.Helper()
	body := strings.Repeat(" ", 4096)
	req, err := http.NewRequest(http.MethodPut, sc["endpoint"]+"/"+sc["bucket"]+"?lifecycle=", nil)
	require.NoError(t, err)
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/xml")
	sigv4.Cloud4.SignRequest(req, sigv4.HashHex([]byte(body)), sigv4.Credentials{AccessKeyID: sc["key_id"], SecretAccessKey: sc["secret"]},
		sc["region"], "s3", time.Now(), sigv4.Options{SignPayloadHash: true})
	return req
}

func TestFaults_AStalledBodyIs408InTheAPIsErrorBodyOnEveryAPI(t *testing.T) {
	creds, _, stop := startServe(t, t.TempDir(), "--read-timeout", "1s")
	defer func() { require.NoError(t, stop()) }()
	type result struct {
		api    string
		answer answer
		text   string
	}
	var results []result
	for _, tg := range authenticatedTargets(t, creds) {
		results = append(results, result{tg.api, stalledAnswer(t, tg.bodyTarget, tg.bodyStart), ""})
		assertAnswerInSpec(t, tg.bodyTarget, results[len(results)-1].answer)
	}
	results = append(results, result{"storage", rawStalled(t, signedStalledPut(t, creds["storage"]), "<Lifecycle"), "RequestTimeout"})
	for _, r := range results {
		assert.Equal(t, http.StatusRequestTimeout, r.answer.status, "%s: %s", r.api, r.answer.body)
		assert.NotContains(t, r.answer.body, "127.0.0.1", "%s: no socket address in the body", r.api)
		assert.NotContains(t, r.answer.body, "i/o timeout", r.api)
		assert.Contains(t, r.answer.body, "read timeout", r.api)
		if r.text != "" {
			assert.Contains(t, r.answer.body, r.text, r.api)
		}
	}

	// /metrics counts what was sent: 408s, no 499 or 500.
	assertStatusesCounted(t, creds, "408", "499", "500", "401")
}

// assertStatusesCounted checks the stack's /metrics: every API answered
// some requests with status, and none with any of the statuses in none.
func assertStatusesCounted(t *testing.T, creds map[string]map[string]string, status string, none ...string) {
	t.Helper()
	f, err := telemetrytest.Scrape(context.Background(), http.DefaultClient, creds["admin"]["base_url"]+"/metrics", nil)
	require.NoError(t, err)
	for _, api := range []string{"pam", "fax", "restaurant", "admin", "storage"} {
		assert.Positive(t, f.Value("apistack_http_requests_total", map[string]string{"api": api, "status": status}), api)
		for _, other := range none {
			assert.Zero(t, f.Value("apistack_http_requests_total", map[string]string{"api": api, "status": other}), "%s %s", api, other)
		}
	}
}

func TestFaults_AJSONSyntaxErrorIs400InvalidRequest(t *testing.T) {
	creds, _, stop := startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()
	for _, tg := range authenticatedTargets(t, creds) {
		if tg.contentType != "application/json" {
			continue
		}
		resp, body, err := roundTrip(tg.request(t, strings.NewReader(`{"name": `), int64(len(`{"name": `))))
		require.NoError(t, err)
		a := answer{status: resp.StatusCode, header: resp.Header, body: string(body)}
		assert.Equal(t, http.StatusBadRequest, a.status, "%s: %s", tg.api, a.body)
		assert.Contains(t, strings.ToLower(a.body), "invalid", tg.api)
		assertAnswerInSpec(t, tg.bodyTarget, a)
	}
}

// rawFramed writes req's head and then body exactly as given, framed as
// chunked ("chunked") or by req's Content-Length ("length"), closes the
// writing half of the connection (the body ends there), and reads the
// answer.
func rawFramed(t *testing.T, req *http.Request, framing, body string) answer {
	t.Helper()
	return rawExchange(t, req, framing, body, true)
}

// rawExchange writes req's head, framed as chunked ("chunked") or by req's
// Content-Length ("length"), and then body exactly as given; with
// closeWrite it closes the writing half of the connection. It reads the
// answer.
func rawExchange(t *testing.T, req *http.Request, framing, body string, closeWrite bool) answer {
	t.Helper()
	conn, err := net.Dial("tcp", req.URL.Host)
	require.NoError(t, err)
	defer conn.Close()
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), req.URL.Host)
	if framing == "chunked" {
		head.WriteString("Transfer-Encoding: chunked\r\n")
	} else {
		fmt.Fprintf(&head, "Content-Length: %d\r\n", req.ContentLength)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&head, "%s: %s\r\n", k, v)
		}
	}
	head.WriteString("\r\n")
	_, err = io.WriteString(conn, head.String()+body)
	require.NoError(t, err)
	if closeWrite {
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

// bodyReadTargets are, per API, an operation that reads a body: the
// authenticated ones, the unauthenticated token exchange of PAM, the
// sandbox API's create.
func bodyReadTargets(t *testing.T, creds map[string]map[string]string) []limitTarget {
	t.Helper()
	targets := authenticatedTargets(t, creds)
	pam := creds["pam"]
	targets = append(targets,
		limitTarget{bodyTarget: bodyTarget{api: "pam token exchange", method: http.MethodPost,
			url:         pam["base_url"] + "/v1/teams/" + url.PathEscape(pam["team"]) + "/service_token",
			contentType: "application/json"}, bodyStart: `{"key_id": "`},
		limitTarget{bodyTarget: bodyTarget{api: "sandbox", method: http.MethodPost, url: creds["sandboxes"]["base_url"] + "/sandboxes",
			contentType: "application/json", header: http.Header{"Authorization": {"Bearer " + creds["sandboxes"]["token"]}}},
			bodyStart: `{"clock": "`},
	)
	return targets
}

func TestFaults_ABodyMalformedOrCutShortIs400InTheAPIsErrorBodyOnEveryAPI(t *testing.T) {
	creds, _, stop := startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()
	type result struct {
		api, framing string
		answer       answer
	}
	var results []result
	for _, tg := range bodyReadTargets(t, creds) {
		// A chunk size that is not hexadecimal, after a first chunk.
		chunked := fmt.Sprintf("%x\r\n%s\r\nzz\r\n", len(tg.bodyStart), tg.bodyStart)
		r := tg.request(t, nil, 4096)
		for _, c := range []result{
			{api: tg.api, framing: "chunked", answer: rawFramed(t, r, "chunked", chunked)},
			// 4 KiB declared, the start sent, then the body ends.
			{api: tg.api, framing: "cut short", answer: rawFramed(t, r, "length", tg.bodyStart)},
		} {
			results = append(results, c)
			assertAnswerInSpec(t, tg.bodyTarget, c.answer)
		}
	}
	storage := signedStalledPut(t, creds["storage"])
	results = append(results,
		result{"storage", "chunked", rawFramed(t, storage, "chunked", "a\r\n<Lifecycle\r\nzz\r\n")},
		result{"storage", "cut short", rawFramed(t, storage, "length", "<Lifecycle")})
	for _, r := range results {
		assert.Equal(t, http.StatusBadRequest, r.answer.status, "%s, %s: %s", r.api, r.framing, r.answer.body)
		assert.Contains(t, r.answer.body, "request body", "%s, %s: the message says what was wrong", r.api, r.framing)
		assert.NotContains(t, r.answer.body, "database", "%s, %s: no false outage", r.api, r.framing)
	}

	// /metrics counts 400s: no 500, 503 or 401 for a body that did not
	// arrive whole.
	assertStatusesCounted(t, creds, "400", "500", "503", "401")
}
