package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/egress/egresstest"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/stack"
)

// hostile is one request of the sweep.
type hostile struct {
	name   string
	api    string // which port, and which error shape the answer must have
	method string
	path   string // with its query
	header http.Header
	body   string
	// sign: a storage request signed with the sandbox's key (its body
	// reaches the XML decoder).
	sign bool
	// guess: a wrong token for the admin port, sent from the second source
	// address (127.0.0.2), which they get throttled; the rest of the sweep
	// keeps the first one's count clean.
	guess bool
	// server: answered by net/http before any handler (oversized headers):
	// sent without the spec's check.
	server bool
	// want, when set, is the status the request must be answered.
	want int
}

// hostileDeadline is the most any answer of the sweep may take: no request
// may hang the server.
const hostileDeadline = 10 * time.Second

// TestHostileInput_NoCrashNoHangAndEveryErrorInItsAPIsShape sends a few
// hundred hostile requests to every port of a stack (malformed JSON, XML and
// forms, odd methods, traversing and oversized paths, huge headers, bad
// encodings and queries, wrong tokens, refused URL spellings, secrets in
// escapes) and asserts that none is answered 5xx (but a documented 503 with
// Retry-After), none takes longer than hostileDeadline, every answer keeps to
// its API's spec (the servers validate their responses) and every error has
// its API's documented shape.
func TestHostileInput_NoCrashNoHangAndEveryErrorInItsAPIsShape(t *testing.T) {
	ctx := context.Background()
	var violations sync.Map
	cfg := stack.Config{
		DataDir: t.TempDir(), OpenDB: stacktest.OpenDB(t), Clock: clock.NewFake(time.Now()),
		ValidateResponses: true,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		OnResponseViolation: func(api string, r *http.Request, status int, err error) {
			violations.Store(fmt.Sprintf("%s %s %s -> %d: %v", api, r.Method, r.URL.Path, status, err), true)
		},
	}
	st, _, urls := stacktest.OpenServed(t, cfg)
	st.Start(ctx)

	sb := createSandbox(t, urls[stack.Admin], st.SandboxCreatorToken)
	c := sb.Credentials
	pamToken := exchange(t, c.Pam.BaseUrl+"/v1/teams/"+c.Pam.Team+"/service_token",
		fmt.Sprintf(`{"key_id":%q,"key_secret":%q}`, c.Pam.KeyId, c.Pam.KeySecret), "bearer_token")
	restaurantToken := exchange(t, c.Restaurant.BaseUrl+"/authentication/v1/authentication/login",
		fmt.Sprintf(`{"clientId":%q,"clientSecret":%q,"userAccessType":"PLATFORM_MACHINE_CLIENT"}`, c.Restaurant.ClientId, c.Restaurant.ClientSecret), "token.accessToken")

	auth := map[string]http.Header{
		stack.PAM:        {"Authorization": {"Bearer " + pamToken}},
		stack.Fax:        {"Authorization": {"Bearer " + c.Fax.ApiKey}},
		stack.Restaurant: {"Authorization": {"Bearer " + restaurantToken}, "Platform-Restaurant-External-Id": {c.Restaurant.RestaurantGuid}},
		stack.Admin:      {"Authorization": {"Bearer " + st.AdminToken}},
		stack.Sandbox:    {"Authorization": {"Bearer " + sb.Token}},
		stack.Storage:    {},
	}
	team, bucket := c.Pam.Team, c.Storage.Bucket
	requests := hostileRequests(team, bucket, sb.Id, c.Fax.ConnectionId, c.Pam.KeyId, c.Pam.KeySecret, c.Restaurant.ClientId, c.Restaurant.ClientSecret)
	require.GreaterOrEqual(t, len(requests), 200)
	// Every operation of the admin port, from the spec: a body of the
	// wrong type (415), a path parameter no schema takes (400), and, once
	// the guessing address is throttled (it is by now: the sweep sends its
	// wrong tokens first), any token from it (429).
	adminSpec, err := adminserver.GetSpec()
	require.NoError(t, err)
	requests = append(requests, specRequests(t, adminSpec, stack.Admin, "sweep-x", func(op *openapi3.Operation, method, path string) *hostile {
		if op.RequestBody == nil {
			return nil
		}
		return &hostile{name: "admin " + op.OperationID + ": a text body", method: method, path: path,
			header: http.Header{"Content-Type": {"text/plain"}}, body: "x", want: http.StatusUnsupportedMediaType}
	})...)
	requests = append(requests, specRequests(t, adminSpec, stack.Admin, "%20", func(op *openapi3.Operation, method, path string) *hostile {
		if !strings.Contains(path, "%20") || op.Responses.Status(http.StatusBadRequest) == nil {
			return nil
		}
		return &hostile{name: "admin " + op.OperationID + ": a blank path parameter", method: method, path: path, want: http.StatusBadRequest}
	})...)
	sandboxSpec, err := sandboxserver.GetSpec()
	require.NoError(t, err)
	requests = append(requests, specRequests(t, sandboxSpec, stack.Sandbox, sb.Id, func(op *openapi3.Operation, method, path string) *hostile {
		return &hostile{name: "sandbox " + op.OperationID + ": from a throttled address", method: method, path: path, guess: true,
			want: http.StatusTooManyRequests}
	})...)

	// Every answer is checked against its spec on this side too, and its
	// (operation, status) recorded for the contract coverage.
	clients := map[string]map[bool]*http.Client{}
	guesser := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}
	for api, capi := range map[string]contract.API{stack.PAM: contract.PAM, stack.Fax: contract.Fax, stack.Storage: contract.Storage,
		stack.Restaurant: contract.Restaurant, stack.Admin: contract.Admin, stack.Sandbox: contract.Sandbox, "inbox": ""} {
		clients[api] = map[bool]*http.Client{}
		for _, guess := range []bool{false, true} {
			var next http.RoundTripper = http.DefaultTransport
			if guess {
				next = guesser
			}
			if api == stack.Storage {
				next = &sigv4.Transport{Credentials: sigv4.Credentials{AccessKeyID: c.Storage.KeyId, SecretAccessKey: c.Storage.Secret},
					Region: c.Storage.Region, Service: "s3", Next: next}
			}
			if capi != "" {
				checked, err := contract.ForAPI(capi, next, contract.WithoutRequestValidation(), contract.OnViolation(func(v *contract.Violation) {
					violations.Store(fmt.Sprintf("client side: %v", v), true)
				}))
				require.NoError(t, err)
				next = checked
			}
			clients[api][guess] = &http.Client{Timeout: hostileDeadline, Transport: next,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		}
	}
	unsigned, err := contract.ForAPI(contract.Storage, http.DefaultTransport, contract.WithoutRequestValidation(), contract.OnViolation(func(v *contract.Violation) {
		violations.Store(fmt.Sprintf("client side: %v", v), true)
	}))
	require.NoError(t, err)
	unsignedClient := &http.Client{Timeout: hostileDeadline, Transport: unsigned}
	start := time.Now()
	for _, h := range requests {
		port := h.api
		if port == stack.Sandbox || port == "inbox" {
			port = stack.Admin
		}
		req, err := http.NewRequestWithContext(ctx, h.method, urls[port]+h.path, strings.NewReader(h.body))
		if err != nil {
			// A path net/http refuses to send is no test of the server.
			t.Fatalf("%s: %v", h.name, err)
		}
		if h.body == "" {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		for k, v := range auth[h.api] {
			req.Header[k] = v
		}
		for k, v := range h.header {
			req.Header[k] = v
		}
		client := clients[h.api][h.guess]
		if h.api == stack.Storage && !h.sign {
			client = unsignedClient
		}
		if h.server {
			client = &http.Client{Timeout: hostileDeadline}
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		require.NoError(t, err, "%s: no answer within %s", h.name, hostileDeadline)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err, h.name)
		require.NoError(t, resp.Body.Close())
		took := time.Since(t0)
		assert.Less(t, took, hostileDeadline, h.name)
		if h.want != 0 {
			assert.Equal(t, h.want, resp.StatusCode, "%s: %s %s: %s", h.name, h.method, h.path, body)
		}
		checkHostileAnswer(t, h, resp, body)
	}
	t.Logf("%d hostile requests in %s", len(requests), time.Since(start).Round(time.Millisecond))
	violations.Range(func(k, _ any) bool {
		t.Errorf("an answer breaks its spec: %s", k)
		return true
	})
}

// checkHostileAnswer asserts that resp is no 5xx but a documented one (a
// 503 with Retry-After; storage's 501 NotImplemented, object storage's
// answer to a request it does not implement), and that an error has its
// API's shape (but under /docs/, the documentation pages).
func checkHostileAnswer(t *testing.T, h hostile, resp *http.Response, body []byte) {
	t.Helper()
	status := resp.StatusCode
	switch {
	case status == http.StatusServiceUnavailable:
		assert.NotEmpty(t, resp.Header.Get("Retry-After"), "%s: a 503 says when to retry", h.name)
	case status == http.StatusNotImplemented && h.api == stack.Storage:
		assert.Contains(t, string(body), "<Code>NotImplemented</Code>", h.name)
	default:
		assert.Less(t, status, 500, "%s: %s %s answered %d: %s", h.name, h.method, h.path, status, body)
	}
	if status < 400 || h.method == http.MethodHead || strings.HasPrefix(h.path, "/docs/") {
		return
	}
	if status == http.StatusRequestHeaderFieldsTooLarge && resp.Header.Get("Content-Type") == "text/plain; charset=utf-8" {
		return // net/http's own answer, before any handler
	}
	switch h.api {
	case stack.Storage:
		var e struct {
			XMLName   xml.Name `xml:"Error"`
			Code      string   `xml:"Code"`
			Message   string   `xml:"Message"`
			RequestID string   `xml:"RequestId"`
		}
		if assert.NoError(t, xml.Unmarshal(body, &e), "%s: %d %s", h.name, status, body) {
			assert.NotEmpty(t, e.Code, h.name)
			assert.NotEmpty(t, e.Message, h.name)
		}
	case stack.Fax:
		var e struct {
			Errors []struct {
				Code, Title string
			} `json:"errors"`
		}
		if assert.NoError(t, json.Unmarshal(body, &e), "%s: %d %s", h.name, status, body) && assert.NotEmpty(t, e.Errors, "%s: %s", h.name, body) {
			assert.NotEmpty(t, e.Errors[0].Title, h.name)
		}
	case stack.Restaurant:
		var e struct {
			Status     int    `json:"status"`
			MessageKey string `json:"messageKey"`
			Message    string `json:"message"`
		}
		if assert.NoError(t, json.Unmarshal(body, &e), "%s: %d %s", h.name, status, body) {
			assert.Equal(t, status, e.Status, h.name)
			assert.NotEmpty(t, e.MessageKey, h.name)
		}
	case "inbox":
		// The inbox is a webhook receiver, not an API: any 4xx will do.
	default: // pam, admin, sandbox: {code, error, message}
		var e struct {
			Code    int    `json:"code"`
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if assert.NoError(t, json.Unmarshal(body, &e), "%s: %d %s", h.name, status, body) {
			assert.Equal(t, status, e.Code, "%s: %s", h.name, body)
			assert.NotEmpty(t, e.Error, h.name)
			assert.NotEmpty(t, e.Message, h.name)
		}
	}
}

// hostileRequests builds the sweep over every API.
func hostileRequests(team, bucket, sandboxID, connection, keyID, keySecret, clientID, clientSecret string) []hostile {
	var out []hostile
	add := func(h hostile) {
		if h.method == "" {
			h.method = http.MethodPost
		}
		if h.header == nil {
			h.header = http.Header{}
		}
		if h.body != "" && h.header.Get("Content-Type") == "" {
			h.header.Set("Content-Type", "application/json")
		}
		out = append(out, h)
	}
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	badJSON := map[string]string{
		"truncated": `{"name":`, "not an object": `[]`, "null": `null`, "string": `"x"`, "two documents": `{"a":1}{"b":2}`,
		"deep nesting": deep, "invalid UTF-8": "{\"name\":\"\xff\xfe\"}", "huge number": `{"name":1e999999}`,
		"NUL": "{\"name\":\"a\x00b\"}", "byte order mark": "\xEF\xBB\xBF{\"name\":\"x\"}", "trailing garbage": `{"name":"x"} x`,
		"lone surrogate": `{"name":"\ud800"}`, "unknown fields": `{"zzz":1,"name":{"$ne":null}}`, "empty": " ",
	}
	jsonOps := []struct{ api, method, path string }{
		{stack.PAM, http.MethodPost, "/v1/teams/" + team + "/groups"},
		{stack.PAM, http.MethodPost, "/v1/teams/" + team + "/service_token"},
		{stack.Fax, http.MethodPost, "/v2/faxes"},
		{stack.Fax, http.MethodPatch, "/v2/fax_applications/" + connection},
		{stack.Restaurant, http.MethodPost, "/authentication/v1/authentication/login"},
		{stack.Admin, http.MethodPost, "/pam/teams"},
		{stack.Admin, http.MethodPost, "/fax/accounts/" + sandboxID + "/applications"},
		{stack.Sandbox, http.MethodPost, "/sandboxes/" + sandboxID + "/faults"},
		{stack.Sandbox, http.MethodPost, "/sandboxes/" + sandboxID + "/clock"},
	}
	for _, op := range jsonOps {
		for name, body := range badJSON {
			add(hostile{name: op.api + " " + op.path + ": " + name, api: op.api, method: op.method, path: op.path, body: body})
		}
		for _, ct := range []string{"text/plain", "application/xml", "application/json; charset=latin1", "multipart/form-data", "application/x-www-form-urlencoded"} {
			add(hostile{name: op.api + " " + op.path + ": content type " + ct, api: op.api, method: op.method, path: op.path,
				header: http.Header{"Content-Type": {ct}}, body: "a=%zz&b=\xff"})
		}
	}
	// Odd methods and paths on every port.
	roots := map[string]string{stack.PAM: "/v1/teams/" + team + "/groups", stack.Fax: "/v2/faxes", stack.Restaurant: "/config/v2/menus",
		stack.Admin: "/pam/teams", stack.Sandbox: "/sandboxes/" + sandboxID, stack.Storage: "/" + bucket + "?lifecycle="}
	for api, root := range roots {
		for _, m := range []string{"PROPFIND", "TRACE", "CONNECTX", "OPTIONS", http.MethodPatch, http.MethodHead} {
			add(hostile{name: api + ": method " + m, api: api, method: m, path: root, sign: api == stack.Storage})
		}
		for _, p := range []string{"/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd", "//", "/%00",
			"/" + strings.Repeat("a", 8000), "/%ff%fe", "/\u202e", root + "/..", root + "/%2e%2e", root + "/x/y/z/../../..", "/docs/../openapi.yaml"} {
			add(hostile{name: api + ": path " + p[:min(len(p), 40)], api: api, method: http.MethodGet, path: p})
		}
		add(hostile{name: api + ": 64 KiB header", api: api, method: http.MethodGet, path: root,
			header: http.Header{"X-Junk": {strings.Repeat("j", 64<<10)}}, sign: api == stack.Storage})
		add(hostile{name: api + ": 2 MiB of headers", api: api, method: http.MethodGet, path: root,
			header: http.Header{"X-Junk": {strings.Repeat("j", 2<<20)}}, server: true})
		for _, a := range []string{"Bearer", "Bearer ", "Basic Zm9vOmJhcg==", "Bearer " + strings.Repeat("t", 16<<10), "bearer\ttoken", "Bearer \xff\xfe"} {
			add(hostile{name: api + ": Authorization " + a[:min(len(a), 20)], api: api, method: http.MethodGet, path: root,
				header: http.Header{"Authorization": {a}}, guess: api == stack.Admin || api == stack.Sandbox})
		}
	}
	// Queries.
	for _, q := range []string{"count=abc", "count=-1", "count=99999999999999999999", "offset=%ff", "offset=" + strings.Repeat("A", 4096), "count=1&count=2", "include_deleted=maybe"} {
		add(hostile{name: "pam query " + q[:min(len(q), 30)], api: stack.PAM, method: http.MethodGet, path: "/v1/teams/" + team + "/groups?" + q})
	}
	for _, q := range []string{"page[number]=x", "page[size]=100000", "page[number]=-1", "filter[created_at][gte]=yesterday", "filter[direction]=sideways", "page%5Bnumber=1"} {
		add(hostile{name: "fax query " + q, api: stack.Fax, method: http.MethodGet, path: "/v2/faxes?" + q})
	}
	for _, q := range []string{"pageSize=0", "pageSize=301", "pageToken=%%%", "pageToken=eyJ9.AAAA", "lastModified=9999-99-99", "page=-5"} {
		add(hostile{name: "restaurant query " + q, api: stack.Restaurant, method: http.MethodGet, path: "/config/v2/menuItems?" + q})
	}
	for _, q := range []string{"limit=0", "limit=100000", "after=-1", "since=yesterday", "api=nope", "status=999"} {
		add(hostile{name: "sandbox query " + q, api: stack.Sandbox, method: http.MethodGet, path: "/sandboxes/" + sandboxID + "/requests?" + q})
	}
	// Storage: signed XML the decoder must refuse.
	badXML := map[string]string{
		"not XML":        "not xml",
		"truncated":      "<LifecycleConfiguration><Rule><ID>x</ID>",
		"XXE":            `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><LifecycleConfiguration><Rule><ID>&e;</ID></Rule></LifecycleConfiguration>`,
		"billion laughs": `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><LifecycleConfiguration><Rule><ID>&c;</ID></Rule></LifecycleConfiguration>`,
		"latin1":         `<?xml version="1.0" encoding="ISO-8859-1"?><LifecycleConfiguration/>`,
		"deep":           strings.Repeat("<a>", 20000) + strings.Repeat("</a>", 20000),
		"wrong root":     `<Foo/>`,
		"huge attribute": `<LifecycleConfiguration x="` + strings.Repeat("x", 500<<10) + `"/>`,
		"1001 rules":     "<LifecycleConfiguration>" + strings.Repeat("<Rule><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>", 1001) + "</LifecycleConfiguration>",
		"negative days":  "<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Filter><Prefix></Prefix></Filter><Expiration><Days>-1</Days></Expiration></Rule></LifecycleConfiguration>",
		"invalid UTF-8":  "<LifecycleConfiguration><Rule><ID>\xff</ID></Rule></LifecycleConfiguration>",
		"empty":          "",
	}
	for name, body := range badXML {
		add(hostile{name: "storage PUT lifecycle: " + name, api: stack.Storage, method: http.MethodPut, path: "/" + bucket + "?lifecycle=",
			header: http.Header{"Content-Type": {"application/xml"}}, body: body, sign: true})
	}
	for _, p := range []string{"/" + bucket + "?lifecycle=&lifecycle=", "/" + bucket, "/" + bucket + "?acl", "/" + bucket + "/..?lifecycle=", "/sbx-0000000000000000-bucket?lifecycle=", "/?lifecycle="} {
		add(hostile{name: "storage signed GET " + p, api: stack.Storage, method: http.MethodGet, path: p, sign: true})
		add(hostile{name: "storage unsigned GET " + p, api: stack.Storage, method: http.MethodGet, path: p})
	}
	// The round's findings: escaped secrets, URL spellings, wrong tokens,
	// existence probes.
	add(hostile{name: "PAM escaped key_secret", api: stack.PAM, path: "/v1/teams/" + team + "/service_token",
		body: `{"\u006bey_id":"` + keyID + `","\u006b\u0065y_\u0073ecret":"` + keySecret + `"}`})
	add(hostile{name: "PAM form token exchange", api: stack.PAM, path: "/v1/teams/" + team + "/service_token",
		header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, body: "key_id=" + keyID + "&key%5Fsecret=" + keySecret})
	add(hostile{name: "restaurant escaped clientSecret", api: stack.Restaurant, path: "/authentication/v1/authentication/login",
		body: `{"clientId":"` + clientID + `","client\u0053ecret":"` + clientSecret + `","userAccessType":"PLATFORM_MACHINE_CLIENT"}`})
	for _, s := range egresstest.Spellings {
		add(hostile{name: "fax webhook_url " + s.Name, api: stack.Fax, method: http.MethodPatch, path: "/v2/fax_applications/" + connection,
			body: `{"webhook_url":"` + s.URL() + `"}`})
		add(hostile{name: "admin webhook_url " + s.Name, api: stack.Admin, path: "/fax/accounts/" + sandboxID + "/applications",
			body: `{"name":"x","webhook_url":"` + s.URL() + `"}`})
	}
	for i := range 12 {
		add(hostile{name: fmt.Sprintf("wrong sandbox token %d", i), api: stack.Sandbox, method: http.MethodGet, path: "/sandboxes/" + sandboxID,
			header: http.Header{"Authorization": {"Bearer sbx_wrong"}}, guess: true})
	}
	for _, id := range []string{sandboxID, "sbx-0000000000000000", "sbx-../../x", "sbx-%00"} {
		add(hostile{name: "unsigned inbox " + id, api: "inbox", path: "/sandboxes/" + id + "/inbox", body: `{"data":{},"meta":{}}`})
	}
	add(hostile{name: "restaurant unknown restaurant", api: stack.Restaurant, method: http.MethodGet, path: "/config/v2/menus",
		header: http.Header{"Platform-Restaurant-External-Id": {"0f0f0f0f-0000-4000-8000-000000000000"}}})
	return out
}

// createSandbox creates a sandbox through the sandbox API with the creator
// token.
func createSandbox(t *testing.T, adminURL, creator string) *sandboxapi.CreatedSandbox {
	t.Helper()
	c, err := sandboxapi.NewClientWithResponses(adminURL, sandboxapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+creator)
		return nil
	}))
	require.NoError(t, err)
	resp, err := c.CreateSandboxWithResponse(context.Background(), sandboxapi.CreateSandboxRequest{})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode(), string(resp.Body))
	return resp.JSON201
}

// exchange posts a credential exchange and returns the token at path (a
// dotted path into the JSON answer).
func exchange(t *testing.T, url, body, path string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var doc map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		v = v.(map[string]any)[k]
	}
	return v.(string)
}

// specRequests are, for every operation of spec, a request built from its
// path (each path parameter replaced by param) on api.
func specRequests(t *testing.T, spec *openapi3.T, api, param string, each func(op *openapi3.Operation, method, path string) *hostile) []hostile {
	t.Helper()
	var out []hostile
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			p := path
			for strings.Contains(p, "{") {
				i, j := strings.Index(p, "{"), strings.Index(p, "}")
				p = p[:i] + param + p[j+1:]
			}
			if h := each(op, method, p); h != nil {
				h.api = api
				if h.header == nil {
					h.header = http.Header{}
				}
				out = append(out, *h)
			}
		}
	}
	return out
}
