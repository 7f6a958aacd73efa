package harproxy_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy"
	"github.com/apistack/apistack/servers/cmd/apistack/internal/harproxy/harproxytest"
	"github.com/apistack/apistack/servers/internal/har"
	"github.com/apistack/apistack/servers/internal/har/hartest"
)

// startProxy runs a proxy of api in front of upstream recording into a
// HAR file, returning its URL, the proxy and the file's path.
func startProxy(t *testing.T, cfg harproxy.Config) (string, *harproxy.Proxy, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.har")
	w, err := har.Create(path, har.Log{Creator: har.Creator{Name: "test", Version: "1"}, BodyCap: cfg.BodyCap})
	require.NoError(t, err)
	cfg.Record = w
	p, err := harproxy.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = w.Close() })
	return srv.URL, p, path
}

// finish waits for the recording of every answered exchange and closes the file.
func finish(t *testing.T, p *harproxy.Proxy, path string) *har.Log {
	t.Helper()
	p.Wait()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(data, []byte(`{"log":`)))
	// Close: the recording is then a whole HAR.
	log, err := har.Read(bytes.NewReader(append(data, []byte("]}}")...)))
	require.NoError(t, err)
	full := append(bytes.Clone(data), []byte("\n]}}\n")...)
	hartest.RequireValid(t, full)
	return log
}

func send(t *testing.T, method, url, contentType, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body == "" {
		req.Body = http.NoBody
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, got
}

func TestProxy_EveryDeviationIsRecordedAndNothingValidIsFlagged(t *testing.T) {
	up := &harproxytest.DeviatingPAM{}
	upstream := httptest.NewServer(up)
	t.Cleanup(upstream.Close)
	u, err := url.Parse(upstream.URL)
	require.NoError(t, err)
	proxyURL, p, path := startProxy(t, harproxy.Config{API: contract.PAM, Upstream: u})

	auth := []string{"Authorization", "Bearer pat_upstream", "X-Trace", "abc"}
	type call struct{ method, path, body string }
	var calls []call
	for _, c := range harproxytest.Calls {
		calls = append(calls, call{c[0], c[1], c[2]})
	}
	for i, c := range calls {
		ct := ""
		if c.body != "" {
			ct = "application/json"
		}
		status, header, body := send(t, c.method, proxyURL+c.path, ct, c.body, auth...)
		got, sent := up.Exchange(i)
		// Passed on byte for byte, both ways.
		assert.Equal(t, c.method, got.Method)
		assert.Equal(t, c.path, got.URI)
		assert.Equal(t, c.body, string(got.Body))
		assert.Equal(t, "Bearer pat_upstream", got.Header.Get("Authorization"))
		assert.Equal(t, "abc", got.Header.Get("X-Trace"))
		assert.Empty(t, got.Header.Get("X-Forwarded-For"), "the proxy adds nothing")
		assert.Equal(t, sent, body, "%s %s: the answer's body", c.method, c.path)
		assert.NotZero(t, status)
		assert.Equal(t, "application/json", header.Get("Content-Type"))
	}

	// The live summary counts each exchange once it is checked.
	var live harproxy.Summary
	require.Eventually(t, func() bool {
		status, _, body := send(t, "GET", proxyURL+harproxy.ReportPath, "", "")
		require.Equal(t, 200, status)
		require.NoError(t, json.Unmarshal(body, &live))
		return live.Exchanges == len(calls)
	}, 10*time.Second, 5*time.Millisecond)

	log := finish(t, p, path)
	require.Len(t, log.Entries, len(calls))
	// Each entry is written as its exchange ends: in the order they
	// started once sorted.
	slices.SortStableFunc(log.Entries, func(a, b har.Entry) int { return a.Started().Compare(b.Started()) })
	byOp := map[string][]har.Violation{}
	for i, e := range log.Entries {
		assert.Equal(t, calls[i].method, e.Request.Method)
		byOp[e.Operation+" "+strings.TrimPrefix(e.Request.URL, upstream.URL)] = e.Violations
	}
	pointers := func(vs []har.Violation) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Where+" "+v.Pointer)
		}
		return out
	}
	assert.Empty(t, byOp["IssueServiceToken /v1/teams/demo/service_token"])
	assert.Empty(t, byOp["GetGroup /v1/teams/demo/groups/demo-admins"])
	assert.ElementsMatch(t, []string{"response /header/X-RateLimit-Limit", "response /body/list/0/roles", "response /body/list/0/colour"},
		pointers(byOp["ListGroups /v1/teams/demo/groups?count=5"]), "%+v", byOp["ListGroups /v1/teams/demo/groups?count=5"])
	assert.Equal(t, []string{"response /status"}, pointers(byOp["GetGroup /v1/teams/demo/groups/teapot"]))
	assert.Equal(t, []string{"request /body/name"}, pointers(byOp["CreateGroup /v1/teams/demo/groups"]), "%+v", byOp["CreateGroup /v1/teams/demo/groups"])

	// Secrets are redacted as the journal redacts them.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "s3cret-value")
	assert.NotContains(t, string(data), "pat_upstream")
	assert.JSONEq(t, `{"key_id":"k1","key_secret":"[redacted]"}`, log.Entries[0].Request.PostData.Text)

	// The live summary counts by operation.
	assert.Equal(t, 5, live.Exchanges)
	assert.Equal(t, 5, live.Violations)
	assert.Contains(t, live.Operations, harproxy.OperationSummary{Operation: "ListGroups", Exchanges: 1, Violations: 3})

	// The offline check of the recording finds the same.
	findings, checked, err := harproxy.CheckLog(t.Context(), contract.PAM, log)
	require.NoError(t, err)
	assert.Equal(t, 5, checked)
	assert.Len(t, findings, 5)
}

// A body over the cap streams through whole; the recording keeps the cap's
// worth, says so, and checks the rest of the exchange.
func TestProxy_BodiesOverTheCapPassWholeAndAreRecordedCut(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 100<<10)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		assert.Equal(t, big, got)
		harproxytest.RateHeaders(w.Header(), true)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		_, _ = w.Write(append(append([]byte(`{"id":"`+harproxytest.GroupID+`","name":"ops","roles":[],"deleted_at":null,"pad":"`), big...), '"', '}'))
	}))
	t.Cleanup(upstream.Close)
	u, _ := url.Parse(upstream.URL)
	proxyURL, p, path := startProxy(t, harproxy.Config{API: contract.PAM, Upstream: u, BodyCap: 4096})

	status, _, body := send(t, "POST", proxyURL+"/v1/teams/demo/groups", "application/json", string(big), "Authorization", "Bearer x")
	assert.Equal(t, 201, status)
	assert.Len(t, body, len(big)+len(`{"id":"`+harproxytest.GroupID+`","name":"ops","roles":[],"deleted_at":null,"pad":""}`))

	log := finish(t, p, path)
	require.Len(t, log.Entries, 1)
	e := log.Entries[0]
	assert.True(t, e.Request.PostData.Truncated)
	assert.Contains(t, e.Request.PostData.Comment, "4096 bytes")
	assert.True(t, e.Response.Content.Truncated)
	assert.Equal(t, int64(len(body)), e.Response.Content.Size)
	assert.Contains(t, e.Response.Content.Comment, "cap of 4096 bytes")
	assert.LessOrEqual(t, len(e.Response.Content.Text), 4096)
	assert.Empty(t, e.Violations, "what is known of the exchange keeps to the spec: %+v", e.Violations)
}

// Bodies in flight share a bound on the memory they are kept in: one that
// finds it spent passes whole and is recorded cut, saying why.
func TestProxy_BodiesBeyondTheMemoryBoundAreRecordedCut(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		harproxytest.RateHeaders(w.Header(), true)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"list":[]}`)
	}))
	t.Cleanup(upstream.Close)
	u, _ := url.Parse(upstream.URL)
	proxyURL, p, path := startProxy(t, harproxy.Config{API: contract.PAM, Upstream: u, BodyMemory: 4})
	status, _, body := send(t, "GET", proxyURL+"/v1/teams/demo/groups", "", "", "Authorization", "Bearer x")
	assert.Equal(t, 200, status)
	assert.Equal(t, `{"list":[]}`, string(body))
	log := finish(t, p, path)
	require.Len(t, log.Entries, 1)
	c := log.Entries[0].Response.Content
	assert.True(t, c.Truncated)
	assert.Equal(t, int64(len(body)), c.Size)
	assert.Contains(t, c.Comment, "memory for the bodies in flight")
	assert.Empty(t, log.Entries[0].Violations)

	// The memory is given back once an exchange is recorded.
	status, _, _ = send(t, "GET", proxyURL+"/v1/teams/demo/groups", "", "", "Authorization", "Bearer x")
	assert.Equal(t, 200, status)
}

// Exchanges from many clients at once are each recorded once, with what
// each client was sent, and the recording goes on after the queue ran dry
// and its workers ended.
func TestProxy_ConcurrentExchangesAreEachRecordedOnce(t *testing.T) {
	// Workers that end soon after the queue runs dry, so that the second
	// burst starts them again.
	old := harproxy.SetWorkerLinger(time.Millisecond)
	t.Cleanup(func() { harproxy.SetWorkerLinger(old) })
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		harproxytest.RateHeaders(w.Header(), true)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Seq", r.Header.Get("X-Seq"))
		_, _ = io.WriteString(w, `{"list":[]}`)
	}))
	t.Cleanup(upstream.Close)
	u, _ := url.Parse(upstream.URL)
	proxyURL, p, path := startProxy(t, harproxy.Config{API: contract.PAM, Upstream: u})

	const clients, each = 16, 20
	burst := func(round int) {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					seq := fmt.Sprintf("r%dc%di%d", round, c, i)
					status, header, body := send(t, "GET", proxyURL+"/v1/teams/demo/groups", "", "", "Authorization", "Bearer x", "X-Seq", seq)
					assert.Equal(t, 200, status)
					assert.Equal(t, seq, header.Get("X-Seq"))
					assert.Equal(t, `{"list":[]}`, string(body))
				}
			}()
		}
		wg.Wait()
	}
	burst(0)
	p.Wait()
	assert.Equal(t, clients*each, p.Report().Exchanges)
	// The workers find the queue empty and end; a second burst is
	// recorded all the same.
	require.Eventually(t, func() bool { return p.Workers() == 0 }, 10*time.Second, time.Millisecond)
	burst(1)
	log := finish(t, p, path)
	require.Len(t, log.Entries, 2*clients*each)
	seen := map[string]bool{}
	for _, e := range log.Entries {
		seq := e.Request.Header().Get("X-Seq")
		assert.NotEmpty(t, seq)
		assert.False(t, seen[seq], "recorded twice: %s", seq)
		seen[seq] = true
		assert.Equal(t, seq, e.Response.Header().Get("X-Seq"), "an entry holds its own request's answer")
		assert.Equal(t, `{"list":[]}`, e.Response.Content.Text)
	}
	assert.Len(t, seen, 2*clients*each)
	assert.Equal(t, 2*clients*each, p.Report().Exchanges)
}

// A gzip answer passes compressed, as sent; the recording and the check
// see it decoded.
func TestProxy_CompressedAnswersPassAsSentAndAreCheckedDecoded(t *testing.T) {
	doc := `{"list":[{"id":"` + harproxytest.GroupID + `","name":"ops","roles":["pam_admin"],"deleted_at":null}]}`
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte(doc))
	require.NoError(t, zw.Close())
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		harproxytest.RateHeaders(w.Header(), true)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(zipped.Bytes())
	}))
	t.Cleanup(upstream.Close)
	u, _ := url.Parse(upstream.URL)
	proxyURL, p, path := startProxy(t, harproxy.Config{API: contract.PAM, Upstream: u})

	_, header, body := send(t, "GET", proxyURL+"/v1/teams/demo/groups", "", "", "Authorization", "Bearer x", "Accept-Encoding", "gzip")
	assert.Equal(t, "gzip", header.Get("Content-Encoding"))
	assert.Equal(t, zipped.Bytes(), body)

	log := finish(t, p, path)
	require.Len(t, log.Entries, 1)
	assert.Equal(t, doc, log.Entries[0].Response.Content.Text)
	assert.Equal(t, int64(zipped.Len()), log.Entries[0].Response.BodySize)
	assert.Empty(t, log.Entries[0].Violations)
}

// A JSON answer is read as the servers' validation reads one: a member
// written twice (which JSON readers resolve differently) is a violation of
// the answer, and the answer still passes as it came.
func TestProxy_AJSONAnswerWithAMemberTwiceIsAViolation(t *testing.T) {
	const doc = `{"list":[],"list":[{"id":"x"}]}`
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		harproxytest.RateHeaders(w.Header(), true)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, doc)
	}))
	t.Cleanup(upstream.Close)
	u, _ := url.Parse(upstream.URL)
	proxyURL, p, path := startProxy(t, harproxy.Config{API: contract.PAM, Upstream: u})
	status, _, body := send(t, "GET", proxyURL+"/v1/teams/demo/groups", "", "", "Authorization", "Bearer x")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, doc, string(body))
	log := finish(t, p, path)
	require.Len(t, log.Entries, 1)
	require.NotEmpty(t, log.Entries[0].Violations)
	v := log.Entries[0].Violations[0]
	assert.Equal(t, "response", v.Where)
	assert.Equal(t, "/body", v.Pointer)
	assert.Contains(t, v.Message, `duplicate key "list"`)
}

func TestProxy_UpstreamDownIs502AndRecorded(t *testing.T) {
	upstream := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(upstream.URL)
	upstream.Close()
	proxyURL, p, path := startProxy(t, harproxy.Config{API: contract.PAM, Upstream: u})
	status, _, _ := send(t, "GET", proxyURL+"/v1/teams/demo/groups", "", "", "Authorization", "Bearer x")
	assert.Equal(t, http.StatusBadGateway, status)
	log := finish(t, p, path)
	require.Len(t, log.Entries, 1)
	assert.Equal(t, 0, log.Entries[0].Response.Status)
	assert.Contains(t, log.Entries[0].Error, "upstream")
	assert.Equal(t, 1, p.Report().Failed)
}

func TestProxy_RefusesCONNECTAndRelativeURLsInForwardMode(t *testing.T) {
	p, err := harproxy.New(harproxy.Config{API: contract.Storage, Forward: true})
	require.NoError(t, err)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	status, _, body := send(t, "GET", srv.URL+"/bucket?lifecycle", "", "")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(body), "HTTP_PROXY")

	req, err := http.NewRequest(http.MethodConnect, srv.URL, nil)
	require.NoError(t, err)
	req.Host = "storage.example:443"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotImplemented, resp.StatusCode)

	_, err = harproxy.New(harproxy.Config{API: contract.PAM})
	assert.Error(t, err, "neither an upstream nor forward mode")
}

func TestPathStyle_VirtualHostStorageAddressesRouteAsPathStyle(t *testing.T) {
	tests := []struct{ host, path, want string }{
		{"logs.us-east-1.storage.example", "/", "/logs"},
		{"logs.us-east-1.localhost:8083", "/", "/logs"},
		{"127.0.0.1:8083", "/logs", "/logs"},
		{"storage.example", "/logs", "/logs"},
	}
	for _, tt := range tests {
		req := &http.Request{Host: tt.host, URL: &url.URL{Path: tt.path, RawQuery: "lifecycle"}}
		harproxy.PathStyle(req)
		assert.Equal(t, tt.want, req.URL.Path, tt.host)
	}
}
