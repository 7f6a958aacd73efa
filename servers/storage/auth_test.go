package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/internal/lifecycledoc"
	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/heaptest"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// rawRequest is a request signed by hand with the pure functions, so that each
// part of the signature can be got wrong on purpose.
type rawRequest struct {
	method    string
	target    string // path and query, as sent
	host      string // the Host header; "" for the server's address
	body      []byte
	keyID     string
	secret    string
	region    string
	service   string
	at        time.Time
	signed    []string // the headers to sign; nil for every one present
	claimHash string   // X-Cloud-Content-Sha256; "" for the body's hash
	after     func(h http.Header)
	unsigned  bool
	headers   map[string][]string // more headers, set before signing (and signed)
}

func (r rawRequest) send(t *testing.T, env *storagetest.Env) (int, storageapi.Error, http.Header) {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPut
	}
	if r.target == "" {
		r.target = "/" + storagetest.Bucket + "?lifecycle"
	}
	if r.keyID == "" {
		r.keyID = env.Key.KeyID
	}
	if r.secret == "" {
		r.secret = env.Key.Secret
	}
	if r.region == "" {
		r.region = storage.DefaultRegion
	}
	if r.service == "" {
		r.service = storage.Service
	}
	req, err := http.NewRequest(r.method, env.URL+r.target, bytes.NewReader(r.body))
	require.NoError(t, err)
	if r.host != "" {
		req.Host = r.host
	}
	if len(r.body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	hash := sigv4.HashHex(r.body)
	if r.claimHash == "" {
		r.claimHash = hash
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("X-Cloud-Date", r.at.UTC().Format(sigv4.TimeFormat))
	req.Header.Set("X-Cloud-Content-Sha256", r.claimHash)
	for k, vs := range r.headers {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if !r.unsigned {
		signed := r.signed
		if signed == nil {
			signed = sigv4.HeadersToSign(req.Header)
		}
		host := req.Host
		if host == "" {
			host = req.URL.Host
		}
		cr := sigv4.CanonicalRequest(req.Method, sigv4.CanonicalURI(req.URL.Path, false), sigv4.CanonicalQuery(req.URL.Query()),
			sigv4.CanonicalHeaders(req.Header, host, signed), strings.Join(signed, ";"), r.claimHash)
		scope := sigv4.Cloud4.Scope(r.at, r.region, r.service)
		sig := sigv4.Signature(sigv4.Cloud4.SigningKey(r.secret, r.at, r.region, r.service), sigv4.Cloud4.StringToSign(r.at, scope, cr))
		req.Header.Set("Authorization", sigv4.Cloud4.AuthorizationHeader(r.keyID, scope, signed, sig))
	}
	if r.after != nil {
		r.after(req.Header)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var e storageapi.Error
	if resp.StatusCode >= 300 {
		e = errorOf(t, body)
		assert.Equal(t, "application/xml", resp.Header.Get("Content-Type"))
		assert.Equal(t, resp.Header.Get("X-Cloud-Request-Id"), e.RequestId)
	}
	return resp.StatusCode, e, resp.Header
}

func requireNothingStored(t *testing.T, env *storagetest.Env) {
	t.Helper()
	n, err := env.Operator.LifecycleCount(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n, "nothing is stored after a refused request")
}

func TestSignature_EveryFailureHasItsCode(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	valid := corpusFile(t, "valid", "expire-days-filter-prefix")
	base := rawRequest{body: valid, at: start}

	ok := base
	status, e, _ := ok.send(t, env)
	require.Equal(t, http.StatusOK, status, "the unmodified request is accepted: %s", e.Message)
	require.NoError(t, env.Operator.DeleteBucket(context.Background(), storagetest.Bucket))
	_, err := env.Operator.CreateBucket(context.Background(), storagetest.Account, storagetest.Bucket, storage.Unversioned)
	require.NoError(t, err)
	requireNothingStored(t, env)

	with := func(change func(*rawRequest)) rawRequest {
		r := base
		change(&r)
		return r
	}
	tests := []struct {
		name   string
		req    rawRequest
		status int
		code   storageapi.ErrorCode
	}{
		{"no Authorization", with(func(r *rawRequest) { r.unsigned = true }), 403, storageapi.ErrorCodeAccessDenied},
		{"unknown key", with(func(r *rawRequest) { r.keyID = "CKNOSUCHKEY000000000" }), 403, storageapi.ErrorCodeInvalidAccessKeyId},
		{"wrong secret", with(func(r *rawRequest) { r.secret = "not-the-secret" }), 403, storageapi.ErrorCodeSignatureDoesNotMatch},
		{"wrong region", with(func(r *rawRequest) { r.region = "us-east-1" }), 400, storageapi.ErrorCodeAuthorizationHeaderMalformed},
		{"wrong service", with(func(r *rawRequest) { r.service = "sqs" }), 400, storageapi.ErrorCodeAuthorizationHeaderMalformed},
		{"scope date is not X-Cloud-Date's", with(func(r *rawRequest) {
			r.after = func(h http.Header) {
				h.Set("Authorization", strings.Replace(h.Get("Authorization"), "/20260314/", "/20260313/", 1))
			}
		}), 400, storageapi.ErrorCodeAuthorizationHeaderMalformed},
		{"16 minutes of skew", with(func(r *rawRequest) { r.at = start.Add(-16 * time.Minute) }), 403, storageapi.ErrorCodeRequestTimeTooSkewed},
		{"host not signed", with(func(r *rawRequest) {
			r.signed = []string{"content-type", "x-cloud-content-sha256", "x-cloud-date"}
		}), 403, storageapi.ErrorCodeAccessDenied},
		{"x-cloud-date not signed", with(func(r *rawRequest) {
			r.signed = []string{"content-type", "host", "x-cloud-content-sha256"}
		}), 403, storageapi.ErrorCodeAccessDenied},
		{"x-cloud-content-sha256 not signed", with(func(r *rawRequest) {
			r.signed = []string{"content-type", "host", "x-cloud-date"}
		}), 403, storageapi.ErrorCodeAccessDenied},
		{"body hash mismatch", with(func(r *rawRequest) {
			r.claimHash = sigv4.HashHex([]byte("another body"))
		}), 400, storageapi.ErrorCodeXCloudContentSHA256Mismatch},
		{"duplicate Authorization", with(func(r *rawRequest) {
			r.after = func(h http.Header) { h.Add("Authorization", h.Get("Authorization")) }
		}), 400, storageapi.ErrorCodeAuthorizationHeaderMalformed},
		{"malformed Authorization", with(func(r *rawRequest) {
			r.after = func(h http.Header) {
				h.Set("Authorization", strings.Replace(h.Get("Authorization"), ", Signature=", ", Signature=, Signature=", 1))
			}
		}), 400, storageapi.ErrorCodeAuthorizationHeaderMalformed},
		{"other algorithm", with(func(r *rawRequest) {
			r.after = func(h http.Header) {
				h.Set("Authorization", strings.Replace(h.Get("Authorization"), "CLOUD4-", "AWS4-", 1))
			}
		}), 400, storageapi.ErrorCodeAuthorizationHeaderMalformed},
		{"tampered header after signing", with(func(r *rawRequest) {
			r.after = func(h http.Header) { h.Set("Content-Type", "application/xml; charset=utf-8") }
		}), 403, storageapi.ErrorCodeSignatureDoesNotMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e, _ := tt.req.send(t, env)
			assert.Equal(t, tt.status, status, e.Message)
			assert.Equal(t, tt.code, e.Code, e.Message)
			assert.NotContains(t, e.Message, env.Key.Secret)
			requireNothingStored(t, env)
		})
	}
}

func TestSignature_FifteenMinutesOfSkewAreAccepted(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	for _, at := range []time.Time{start.Add(-15 * time.Minute), start.Add(15 * time.Minute)} {
		r := rawRequest{method: http.MethodDelete, at: at}
		status, e, _ := r.send(t, env)
		assert.Equal(t, http.StatusNoContent, status, e.Message)
	}
}

func TestAddressing_VirtualHostStyle(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	host := storagetest.Bucket + "." + storage.DefaultRegion + "." + storage.DefaultDomain
	put := rawRequest{target: "/?lifecycle", host: host, body: corpusFile(t, "valid", "legacy-prefix"), at: start}
	status, e, _ := put.send(t, env)
	require.Equal(t, http.StatusOK, status, e.Message)

	// The description's sample form, the bucket in the host and in the path.
	get := rawRequest{method: http.MethodGet, target: "/" + storagetest.Bucket + "?lifecycle", host: host + ":8083", at: start}
	status, e, _ = get.send(t, env)
	require.Equal(t, http.StatusOK, status, e.Message)

	other := rawRequest{method: http.MethodGet, target: "/?lifecycle", host: "nosuchbucket." + storage.DefaultRegion + "." + storage.DefaultDomain, at: start}
	status, e, _ = other.send(t, env)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, storageapi.ErrorCodeNoSuchBucket, e.Code)
}

func TestPutLifecycle_HostileXMLIsMalformedAndNothingIsStored(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	open := `<LifecycleConfiguration xmlns="http://cloud.apistack.dev/doc/2006-03-01/">`
	tests := map[string][]byte{
		"doctype with entity expansion": []byte(`<?xml version="1.0"?><!DOCTYPE LifecycleConfiguration [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>` +
			open + `<Rule><ID>&c;</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`),
		"10,000-deep nesting": []byte(open + strings.Repeat("<Rule>", 10000) + strings.Repeat("</Rule>", 10000) + `</LifecycleConfiguration>`),
		"invalid UTF-8":       []byte(open + "<Rule><ID>\xff\xfe</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>"),
		"empty body":          nil,
		"trailing garbage":    append(corpusFile(t, "valid", "legacy-prefix"), "<x/>"...),
		"wrong namespace":     corpusFile(t, "invalid", "wrong-namespace"),
		"unknown element":     corpusFile(t, "invalid", "unknown-element"),
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			r := rawRequest{body: body, at: start}
			status, e, _ := r.send(t, env)
			assert.Equal(t, http.StatusBadRequest, status, e.Message)
			assert.Equal(t, storageapi.ErrorCodeMalformedXML, e.Code, e.Message)
			requireNothingStored(t, env)
		})
	}
}

func TestPutLifecycle_TenMegabyteBodyIsRefusedBeforeItIsRead(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	body := bytes.Repeat([]byte("<!-- padding -->"), 10<<20/16)
	began := time.Now()
	r := rawRequest{body: body, at: start}
	status, e, _ := r.send(t, env)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, storageapi.ErrorCodeMalformedXML, e.Code)
	assert.Contains(t, e.Message, "1048576")
	assert.Less(t, time.Since(began), 5*time.Second)
	requireNothingStored(t, env)
}

func TestRouting_OnlyTheLifecycleSubresourceExists(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	r := rawRequest{method: http.MethodGet, target: "/" + storagetest.Bucket + "/some/key", at: start}
	status, e, _ := r.send(t, env)
	assert.Equal(t, http.StatusNotImplemented, status)
	assert.Equal(t, storageapi.ErrorCodeNotImplemented, e.Code)

	r = rawRequest{method: http.MethodGet, target: "/" + storagetest.Bucket, at: start}
	status, e, _ = r.send(t, env)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, storageapi.ErrorCodeInvalidArgument, e.Code)
	assert.Contains(t, e.Message, "lifecycle")
}

var _ = url.Values{}

// The JavaScript SDK v3 sends PUT /{bucket}/?lifecycle= with path-style
// addressing (S3 accepts the slash); it is the same bucket and the same
// operation, and the signature covers the path as sent.
func TestRouting_ASlashAfterTheBucketIsTheSameBucket(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	for _, target := range []string{"/" + storagetest.Bucket + "/?lifecycle", "/" + storagetest.Bucket + "/?lifecycle="} {
		t.Run(target, func(t *testing.T) {
			put := rawRequest{target: target, body: corpusFile(t, "valid", "legacy-prefix"), at: start}
			status, e, _ := put.send(t, env)
			require.Equal(t, http.StatusOK, status, e.Message)
			get := rawRequest{method: http.MethodGet, target: target, at: start}
			status, e, _ = get.send(t, env)
			require.Equal(t, http.StatusOK, status, e.Message)
			del := rawRequest{method: http.MethodDelete, target: target, at: start}
			status, e, _ = del.send(t, env)
			require.Equal(t, http.StatusNoContent, status, e.Message)
			status, e, _ = get.send(t, env)
			assert.Equal(t, http.StatusNotFound, status)
			assert.Equal(t, storageapi.ErrorCodeNoSuchLifecycleConfiguration, e.Code)
		})
	}
	// Without a query a trailing slash is kept: the docs page is /docs/.
	resp, err := http.Get(env.URL + "/docs/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// What the service does not implement (an object, another subresource) is
// answered only to a caller whose signature holds; any other caller gets the
// signature's error first.
func TestRouting_UnimplementedSubresourcesOnlyAfterAuthentication(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	b := "/" + storagetest.Bucket
	for _, tc := range []struct {
		target string
		status int
		code   storageapi.ErrorCode
	}{
		{b + "/some/key", http.StatusNotImplemented, storageapi.ErrorCodeNotImplemented},
		{b + "/some/key/", http.StatusNotImplemented, storageapi.ErrorCodeNotImplemented},
		{"/no/such/route?x", http.StatusNotImplemented, storageapi.ErrorCodeNotImplemented},
		{b + "?acl", http.StatusBadRequest, storageapi.ErrorCodeInvalidArgument},
		{b + "/?acl=", http.StatusBadRequest, storageapi.ErrorCodeInvalidArgument},
	} {
		target := tc.target
		t.Run(target, func(t *testing.T) {
			unsigned := rawRequest{method: http.MethodGet, target: target, at: start, unsigned: true}
			status, e, _ := unsigned.send(t, env)
			assert.Equal(t, http.StatusForbidden, status, e.Message)
			assert.NotEqual(t, storageapi.ErrorCodeNotImplemented, e.Code)

			forged := rawRequest{method: http.MethodGet, target: target, at: start, secret: "not-the-secret"}
			status, e, _ = forged.send(t, env)
			assert.Equal(t, http.StatusForbidden, status, e.Message)
			assert.Equal(t, storageapi.ErrorCodeSignatureDoesNotMatch, e.Code)

			signed := rawRequest{method: http.MethodGet, target: target, at: start}
			status, e, _ = signed.send(t, env)
			assert.Equal(t, tc.status, status, e.Message)
			assert.Equal(t, tc.code, e.Code)
		})
	}
}

// An access key's secret is cached after its first use; deleting the key
// must still refuse its very next request.
func TestKeys_ADeletedKeyIsRefusedOnTheNextRequestEvenAfterUse(t *testing.T) {
	env, c := startLifecycle(t)
	for range 2 {
		put := putCorpus(t, c, storagetest.Bucket, "valid", "expire-days-filter-prefix")
		require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)
	}
	require.NoError(t, env.Operator.DeleteKey(context.Background(), env.Key.KeyID))

	got := getLifecycle(t, c, storagetest.Bucket)
	require.Equal(t, http.StatusForbidden, got.StatusCode(), "%s", got.Body)
	assert.Equal(t, storageapi.ErrorCodeInvalidAccessKeyId, errorOf(t, got.Body).Code)
	// Every operation alike, the rules staying as they were.
	gone, err := c.DeleteLifecycleWithResponse(context.Background(), storagetest.Bucket, &storageapi.DeleteLifecycleParams{})
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, gone.StatusCode(), "%s", gone.Body)
	assert.Equal(t, storageapi.ErrorCodeInvalidAccessKeyId, errorOf(t, gone.Body).Code)
	put := putCorpus(t, c, storagetest.Bucket, "valid", "legacy-prefix")
	require.Equal(t, http.StatusForbidden, put.StatusCode(), "%s", put.Body)
	assert.Equal(t, storageapi.ErrorCodeInvalidAccessKeyId, errorOf(t, put.Body).Code)
}

// requireAPIError asserts that an answer's status and body are the S3-style
// error code with wantStatus.
func requireAPIError(t *testing.T, status int, body []byte, wantStatus int, code string) {
	t.Helper()
	require.Equal(t, wantStatus, status, "%s", body)
	assert.Equal(t, code, string(errorOf(t, body).Code))
}

func TestAccounts_AKeyActsOnItsOwnAccountsBucketsOnly(t *testing.T) {
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	ctx := context.Background()
	keyB, err := env.Operator.CreateKey(ctx, "tenant-b", "tenant b")
	require.NoError(t, err)
	_, err = env.Operator.CreateBucket(ctx, "tenant-b", "tenant-b-logs", storage.Unversioned)
	require.NoError(t, err)
	a, b := generatedFor(t, env, env.Key, fake.Now), generatedFor(t, env, keyB, fake.Now)
	del := func(c *storageapi.ClientWithResponses, bucket string) *storageapi.DeleteLifecycleResponse {
		resp, err := c.DeleteLifecycleWithResponse(ctx, bucket, &storageapi.DeleteLifecycleParams{})
		require.NoError(t, err)
		return resp
	}

	put := putCorpus(t, a, storagetest.Bucket, "valid", "expire-days-filter-prefix")
	require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)
	before := getLifecycle(t, a, storagetest.Bucket)
	require.Equal(t, http.StatusOK, before.StatusCode(), "%s", before.Body)

	// B's key is refused on A's bucket, for every operation, as if it did
	// not exist: B learns nothing of A's buckets.
	put = putCorpus(t, b, storagetest.Bucket, "valid", "legacy-prefix")
	requireAPIError(t, put.StatusCode(), put.Body, http.StatusNotFound, "NoSuchBucket")
	got := getLifecycle(t, b, storagetest.Bucket)
	requireAPIError(t, got.StatusCode(), got.Body, http.StatusNotFound, "NoSuchBucket")
	gone := del(b, storagetest.Bucket)
	requireAPIError(t, gone.StatusCode(), gone.Body, http.StatusNotFound, "NoSuchBucket")

	after := getLifecycle(t, a, storagetest.Bucket)
	require.Equal(t, http.StatusOK, after.StatusCode(), "%s", after.Body)
	assert.Equal(t, string(before.Body), string(after.Body), "A's rules are unchanged")

	// Each account works on its own buckets, and is refused on the other's.
	put = putCorpus(t, b, "tenant-b-logs", "valid", "legacy-prefix")
	require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)
	foreign := getLifecycle(t, a, "tenant-b-logs")
	requireAPIError(t, foreign.StatusCode(), foreign.Body, http.StatusNotFound, "NoSuchBucket")
	gone = del(a, "tenant-b-logs")
	requireAPIError(t, gone.StatusCode(), gone.Body, http.StatusNotFound, "NoSuchBucket")
	got = getLifecycle(t, b, "tenant-b-logs")
	require.Equal(t, http.StatusOK, got.StatusCode(), "%s", got.Body)
	cfg, err := lifecycledoc.Decode(got.Body)
	require.NoError(t, err)
	require.Len(t, cfg.Rules, 1)
	assert.Equal(t, "legacy", *cfg.Rules[0].ID)

	// A bucket that does not exist answers the same, message included.
	missing := getLifecycle(t, a, "tenant-b-logz")
	requireAPIError(t, missing.StatusCode(), missing.Body, http.StatusNotFound, "NoSuchBucket")
	assert.Equal(t, strings.ReplaceAll(errorOf(t, foreign.Body).Message, "tenant-b-logs", "X"),
		strings.ReplaceAll(errorOf(t, missing.Body).Message, "tenant-b-logz", "X"))
}

// mib is the body size of the requests here: the largest body the server takes.
const mib = 1 << 20

// signing says how bodyRequest signs: not at all, with a wrong secret, or right.
type signing int

const (
	unsigned signing = iota
	wrongSecret
	rightSecret
)

// bodyRequest is a PUT of body (of length n, its SHA-256 declared) to the plain
// bucket, signed at now as s says.
func bodyRequest(t testing.TB, env *storagetest.Env, body io.Reader, n int64, hash string, s signing, now time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, env.URL+"/"+storagetest.Bucket+"?lifecycle", body)
	require.NoError(t, err)
	req.ContentLength = n
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("X-Cloud-Date", now.UTC().Format(sigv4.TimeFormat))
	req.Header.Set("X-Cloud-Content-Sha256", hash)
	if s == unsigned {
		return req
	}
	secret := env.Key.Secret
	if s == wrongSecret {
		secret = strings.Repeat("x", len(secret))
	}
	sigv4.Cloud4.SignRequest(req, hash, sigv4.Credentials{AccessKeyID: env.Key.KeyID, SecretAccessKey: secret},
		storage.DefaultRegion, storage.Service, now, sigv4.Options{SignPayloadHash: true})
	return req
}

// gatedBody is a 1 MiB body whose first 64 KiB are sent at once and the rest
// only after release is closed: a server that answers while the gate is shut
// answered without reading the body.
type gatedBody struct {
	release chan struct{}
	blocked chan struct{} // closed when the first part is sent and the gate is reached
	once    sync.Once
	sent    atomic.Int64
}

const gateAt = 64 << 10

func newGatedBody() *gatedBody {
	return &gatedBody{release: make(chan struct{}), blocked: make(chan struct{})}
}

func (g *gatedBody) Read(p []byte) (int, error) {
	sent := g.sent.Load()
	if sent >= mib {
		return 0, io.EOF
	}
	limit := int64(mib)
	if sent >= gateAt {
		g.once.Do(func() { close(g.blocked) })
		<-g.release
	} else {
		limit = gateAt
	}
	n := min(int64(len(p)), limit-sent)
	for i := range p[:n] {
		p[i] = 'x'
	}
	g.sent.Add(n)
	return int(n), nil
}

var gatedHash = sigv4.HashHex(bytes.Repeat([]byte("x"), mib))

// response is what a request sent in the background came back with.
type response struct {
	status int
	code   storageapi.ErrorCode
	err    error
}

func sendInBackground(t *testing.T, req *http.Request) <-chan response {
	t.Helper()
	out := make(chan response, 1)
	go func() {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			out <- response{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		r := response{status: resp.StatusCode, err: err}
		if resp.StatusCode >= 300 {
			r.code = errorOf(t, body).Code
		}
		out <- r
	}()
	return out
}

func TestAuthentication_RefusesBeforeReadingTheBody(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	for _, tc := range []struct {
		name string
		sign signing
		code storageapi.ErrorCode
	}{
		{"unsigned", unsigned, storageapi.ErrorCodeAccessDenied},
		{"wrong secret", wrongSecret, storageapi.ErrorCodeSignatureDoesNotMatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := newGatedBody()
			defer close(body.release)
			got := sendInBackground(t, bodyRequest(t, env, body, mib, gatedHash, tc.sign, time.Now()))
			select {
			case r := <-got:
				require.NoError(t, r.err)
				assert.Equal(t, http.StatusForbidden, r.status)
				assert.Equal(t, tc.code, r.code)
				assert.LessOrEqual(t, body.sent.Load(), int64(gateAt), "the answer came while the rest of the body was held back")
			case <-time.After(time.Minute):
				t.Fatal("no answer while the body was held back: the server waits for the body before authenticating")
			}
		})
	}

	// The control: a rightly signed request is answered only after its whole
	// body was read (and found not to be a lifecycle configuration).
	t.Run("signed", func(t *testing.T) {
		body := newGatedBody()
		got := sendInBackground(t, bodyRequest(t, env, body, mib, gatedHash, rightSecret, time.Now()))
		select {
		case <-body.blocked:
		case r := <-got:
			t.Fatalf("answered %d %s before the body was read", r.status, r.code)
		}
		close(body.release)
		r := <-got
		require.NoError(t, r.err)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, storageapi.ErrorCodeMalformedXML, r.code)
		assert.Equal(t, int64(mib), body.sent.Load())
	})
	requireNothingStored(t, env)
}

// maxAllocPerRefusedPut bounds what the whole process (the test's client and
// the server) allocates per refused 1 MiB PUT: a quarter of the body, so a
// server that buffered bodies before authenticating could not stay under it.
const maxAllocPerRefusedPut = mib / 4

// putConcurrently sends n PUTs of payload at once, the i-th signed as sign(i)
// says, checks that each is answered want, and returns the bytes the process
// allocated meanwhile.
//
// A refused body is not read: the server answers, closes its side, and
// half a second later (net/http's wait for the client to read the answer)
// closes the connection, which resets it while the client still writes the
// body. On a loaded machine the client may not have read the answer by then,
// and loses it: such a request fails with a broken pipe or a reset, which
// counts as refused when want is a refusal; at least one must be answered.
func putConcurrently(tb testing.TB, env *storagetest.Env, payload []byte, n int, sign func(i int) signing, want int) uint64 {
	tb.Helper()
	hash := sigv4.HashHex(payload)
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = bodyRequest(tb, env, bytes.NewReader(payload), int64(len(payload)), hash, sign(i), time.Now())
	}
	var answered atomic.Int64
	jobs := make([]func() error, n)
	for i, req := range reqs {
		jobs[i] = func() error {
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil && want >= http.StatusBadRequest && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
				return nil
			}
			if err != nil {
				return err
			}
			answered.Add(1)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				return errors.New("answered " + resp.Status)
			}
			return nil
		}
	}
	allocated, errs := heaptest.Concurrently(jobs)
	require.Empty(tb, errs)
	require.Positive(tb, answered.Load(), "no request was answered")
	return allocated
}

// unsignedOrWrong signs every other request with a wrong secret, leaving the
// others unsigned.
func unsignedOrWrong(i int) signing {
	if i%2 == 1 {
		return wrongSecret
	}
	return unsigned
}

func TestAuthentication_FiftyRefusedMiBPutsAllocateLittle(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	payload := bytes.Repeat([]byte("x"), mib)
	const n = 50
	allocated := putConcurrently(t, env, payload, n, unsignedOrWrong, http.StatusForbidden)
	t.Logf("%d refused 1 MiB PUTs allocated %d KiB in all, %d KiB each", n, allocated>>10, allocated/n>>10)
	assert.Less(t, allocated/n, uint64(maxAllocPerRefusedPut), "per refused request")
	requireNothingStored(t, env)
}
