package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/storage/sigv4"
	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
)

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
	conn, err := net.Dial("tcp", req.URL.Host)
	require.NoError(t, err)
	defer conn.Close()
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", req.Method, req.URL.RequestURI(), req.URL.Host, req.ContentLength)
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&head, "%s: %s\r\n", k, v)
		}
	}
	head.WriteString("\r\n")
	_, err = io.WriteString(conn, head.String()+start)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

// signedStalledPut is a lifecycle PUT signed for a 4 KiB body, of which
// only the start will be sent.
func signedStalledPut(t *testing.T, sc map[string]string) *http.Request {
	t.Helper()
	body := strings.Repeat(" ", 4096)
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	req, err := http.NewRequest(http.MethodPut, sc["endpoint"]+"/"+sc["bucket"]+"?lifecycle=", nil)
	require.NoError(t, err)
	req.ContentLength = int64(len(body))
	now := time.Now().UTC()
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("X-Cloud-Date", now.Format(sigv4.TimeFormat))
	req.Header.Set("X-Cloud-Content-Sha256", hash)
	signed := sigv4.HeadersToSign(req.Header)
	cr := sigv4.CanonicalRequest(req.Method, sigv4.CanonicalURI(req.URL.Path, false), sigv4.CanonicalQuery(req.URL.Query()),
		sigv4.CanonicalHeaders(req.Header, req.URL.Host, signed), strings.Join(signed, ";"), hash)
	scope := sigv4.Cloud4.Scope(now, sc["region"], "s3")
	sig := sigv4.Signature(sigv4.Cloud4.SigningKey(sc["secret"], now, sc["region"], "s3"), sigv4.Cloud4.StringToSign(now, scope, cr))
	req.Header.Set("Authorization", sigv4.Cloud4.AuthorizationHeader(sc["key_id"], scope, signed, sig))
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
	f, err := telemetrytest.Scrape(context.Background(), http.DefaultClient, creds["admin"]["base_url"]+"/metrics", nil)
	require.NoError(t, err)
	for _, api := range []string{"pam", "fax", "restaurant", "admin", "storage"} {
		assert.Positive(t, f.Value("apistack_http_requests_total", map[string]string{"api": api, "status": "408"}), api)
		for _, status := range []string{"499", "500", "401"} {
			assert.Zero(t, f.Value("apistack_http_requests_total", map[string]string{"api": api, "status": status}), "%s %s", api, status)
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
