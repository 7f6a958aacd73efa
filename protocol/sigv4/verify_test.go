package sigv4_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/sigv4"
)

const (
	testKeyID  = "CLOUDKEYEXAMPLE"
	testSecret = "c2VjcmV0LWZvci10ZXN0cy1vbmx5"
	testRegion = "eu-central-1"
)

var testNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func testVerifier() sigv4.Verifier {
	return sigv4.Verifier{
		Scheme:  sigv4.Cloud4,
		Region:  testRegion,
		Service: "s3",
		Secret: func(_ context.Context, id string) (string, bool, error) {
			if id == testKeyID {
				return testSecret, true, nil
			}
			return "", false, nil
		},
	}
}

var testBody = []byte(`<LifecycleConfiguration/>`)

// signedRequest returns a lifecycle PUT signed as the storage client signs it.
func signedRequest(t time.Time, secret, region, service string) sigv4.Request {
	req := sigv4.Request{
		Method: http.MethodPut,
		Host:   "photos.eu-central-1.storage.example",
		Path:   "/",
		Query:  url.Values{"lifecycle": {""}},
		Header: http.Header{
			"Content-Type":   {"application/xml"},
			"Content-Length": {"25"},
			"Accept":         {"text/xml"},
		},
		PayloadHash: sigv4.HashHex(testBody),
	}
	signed := sigv4.Cloud4.SignHeaders(req, sigv4.Credentials{AccessKeyID: testKeyID, SecretAccessKey: secret},
		region, service, t, sigv4.Options{SignPayloadHash: true})
	for k, vs := range signed.Header {
		req.Header[k] = vs
	}
	return req
}

func TestVerify_AcceptsWhatTheSignerSigns(t *testing.T) {
	req := signedRequest(testNow.Add(-14*time.Minute), testSecret, testRegion, "s3")
	got, err := testVerifier().Verify(context.Background(), req, sigv4.HashHex(testBody), testNow)
	require.NoError(t, err)
	assert.Equal(t, testKeyID, got.AccessKeyID)
	assert.Contains(t, req.Header.Get("Authorization"), "CLOUD4-HMAC-SHA256 Credential=CLOUDKEYEXAMPLE/20260314/eu-central-1/s3/cloud4_request, ")
	assert.Contains(t, req.Header.Get("Authorization"), "SignedHeaders=accept;content-length;content-type;host;x-cloud-content-sha256;x-cloud-date, ")
}

func TestVerify_AnswersEveryFailureWithItsCode(t *testing.T) {
	good := func() sigv4.Request { return signedRequest(testNow, testSecret, testRegion, "s3") }
	resign := func(mutate func(*sigv4.Request)) sigv4.Request {
		// Sign a request whose headers were changed before signing.
		req := sigv4.Request{Method: http.MethodPut, Host: "h", Path: "/b", Query: url.Values{"lifecycle": {""}},
			Header: http.Header{}, PayloadHash: sigv4.HashHex(testBody)}
		mutate(&req)
		return req
	}
	tests := []struct {
		name   string
		req    sigv4.Request
		body   []byte
		code   string
		status int
	}{
		{"no authorization", func() sigv4.Request { r := good(); r.Header.Del("Authorization"); return r }(), testBody, "AccessDenied", 403},
		{"two authorization headers", func() sigv4.Request {
			r := good()
			r.Header.Add("Authorization", r.Header.Get("Authorization"))
			return r
		}(), testBody, "AuthorizationHeaderMalformed", 400},
		{"malformed authorization", func() sigv4.Request {
			r := good()
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "SignedHeaders=", "Signed=", 1))
			return r
		}(), testBody, "AuthorizationHeaderMalformed", 400},
		{"other algorithm", func() sigv4.Request {
			r := good()
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "CLOUD4-", "AWS4-", 1))
			return r
		}(), testBody, "AuthorizationHeaderMalformed", 400},
		{"unknown key", func() sigv4.Request {
			r := good()
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), testKeyID, "NOSUCHKEY", 1))
			return r
		}(), testBody, "InvalidAccessKeyId", 403},
		{"wrong secret", signedRequest(testNow, "not-the-secret", testRegion, "s3"), testBody, "SignatureDoesNotMatch", 403},
		{"tampered header", func() sigv4.Request { r := good(); r.Header.Set("Content-Type", "text/plain"); return r }(), testBody, "SignatureDoesNotMatch", 403},
		{"tampered path", func() sigv4.Request { r := good(); r.Path = "/other"; return r }(), testBody, "SignatureDoesNotMatch", 403},
		{"wrong region", signedRequest(testNow, testSecret, "us-east-1", "s3"), testBody, "AuthorizationHeaderMalformed", 400},
		{"wrong service", signedRequest(testNow, testSecret, testRegion, "sqs"), testBody, "AuthorizationHeaderMalformed", 400},
		{"scope date is not the date header's", func() sigv4.Request {
			r := good()
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/20260314/", "/20260313/", 1))
			return r
		}(), testBody, "AuthorizationHeaderMalformed", 400},
		{"16 minutes slow", signedRequest(testNow.Add(-16*time.Minute), testSecret, testRegion, "s3"), testBody, "RequestTimeTooSkewed", 403},
		{"16 minutes fast", signedRequest(testNow.Add(16*time.Minute), testSecret, testRegion, "s3"), testBody, "RequestTimeTooSkewed", 403},
		{"date header missing", func() sigv4.Request { r := good(); r.Header.Del("X-Cloud-Date"); return r }(), testBody, "AccessDenied", 403},
		{"date header malformed", func() sigv4.Request { r := good(); r.Header.Set("X-Cloud-Date", "2026-03-14T15:09:26Z"); return r }(), testBody, "AccessDenied", 403},
		{"host not signed", func() sigv4.Request {
			r := good()
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "content-type;host;", "content-type;", 1))
			return r
		}(), testBody, "AccessDenied", 403},
		{"date header not signed", resign(func(r *sigv4.Request) {
			r.Header.Set("X-Cloud-Content-Sha256", r.PayloadHash)
			signed := sigv4.Cloud4.SignHeaders(*r, sigv4.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}, testRegion, "s3", testNow, sigv4.Options{})
			r.Header.Set("X-Cloud-Date", signed.Header.Get("X-Cloud-Date"))
			r.Header.Set("Authorization", strings.Replace(signed.Header.Get("Authorization"), ";x-cloud-date", "", 1))
		}), testBody, "AccessDenied", 403},
		{"payload hash not signed", resign(func(r *sigv4.Request) {
			signed := sigv4.Cloud4.SignHeaders(*r, sigv4.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}, testRegion, "s3", testNow, sigv4.Options{})
			for k, vs := range signed.Header {
				r.Header[k] = vs
			}
		}), testBody, "AccessDenied", 403},
		{"payload hash not hex", func() sigv4.Request {
			r := good()
			r.Header.Set("X-Cloud-Content-Sha256", "UNSIGNED-PAYLOAD")
			return r
		}(), testBody, "InvalidArgument", 400},
		{"body is not the signed body", good(), []byte(`<LifecycleConfiguration>`), "XCloudContentSHA256Mismatch", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testVerifier().Verify(context.Background(), tt.req, sigv4.HashHex(tt.body), testNow)
			var ve *sigv4.Error
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.code, ve.Code, ve.Message)
			assert.Equal(t, tt.status, ve.Status)
			assert.NotContains(t, ve.Error(), testSecret)
		})
	}
}

func TestVerify_ReturnsLookupFailuresWrapped(t *testing.T) {
	boom := errors.New("database is down")
	v := testVerifier()
	v.Secret = func(context.Context, string) (string, bool, error) { return "", false, boom }
	_, err := v.Verify(context.Background(), signedRequest(testNow, testSecret, testRegion, "s3"), sigv4.HashHex(testBody), testNow)
	assert.ErrorIs(t, err, boom)
	var ve *sigv4.Error
	assert.False(t, errors.As(err, &ve))
}

func TestParseAuthorization_IsStrict(t *testing.T) {
	const good = "CLOUD4-HMAC-SHA256 Credential=AKID/20260314/eu-central-1/s3/cloud4_request, SignedHeaders=host;x-cloud-date, Signature=" +
		"5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
	a, err := sigv4.Cloud4.ParseAuthorization(good)
	require.NoError(t, err)
	assert.Equal(t, sigv4.Authorization{
		AccessKeyID: "AKID", Date: "20260314", Region: "eu-central-1", Service: "s3", Terminator: "cloud4_request",
		SignedHeaders: []string{"host", "x-cloud-date"},
		Signature:     "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
	}, a)
	assert.Equal(t, good, a.String(sigv4.Cloud4))

	sig := "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
	cred := "Credential=AKID/20260314/eu-central-1/s3/cloud4_request"
	accepted := []string{
		"CLOUD4-HMAC-SHA256 " + sig + "," + cred + ",SignedHeaders=host",
		"CLOUD4-HMAC-SHA256 " + cred + ",  SignedHeaders=host, " + sig,
	}
	for _, v := range accepted {
		_, err := sigv4.Cloud4.ParseAuthorization(v)
		assert.NoError(t, err, v)
	}
	rejected := map[string]string{
		"empty":                 "",
		"other algorithm":       "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host, " + sig,
		"no space":              "CLOUD4-HMAC-SHA256" + cred + ", SignedHeaders=host, " + sig,
		"credential twice":      "CLOUD4-HMAC-SHA256 " + cred + ", " + cred + ", SignedHeaders=host, " + sig,
		"signature twice":       "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host, " + sig + ", " + sig,
		"signed headers twice":  "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host, SignedHeaders=host, " + sig,
		"missing signature":     "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host",
		"missing credential":    "CLOUD4-HMAC-SHA256 SignedHeaders=host, " + sig,
		"unknown component":     "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host, " + sig + ", Extra=1",
		"trailing comma":        "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host, " + sig + ",",
		"short credential":      "CLOUD4-HMAC-SHA256 Credential=AKID/20260314/eu-central-1/s3, SignedHeaders=host, " + sig,
		"empty key":             "CLOUD4-HMAC-SHA256 Credential=/20260314/eu-central-1/s3/cloud4_request, SignedHeaders=host, " + sig,
		"bad date":              "CLOUD4-HMAC-SHA256 Credential=AKID/20261314/eu-central-1/s3/cloud4_request, SignedHeaders=host, " + sig,
		"unsorted headers":      "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=x-cloud-date;host, " + sig,
		"duplicate header":      "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host;host, " + sig,
		"uppercase header":      "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=Host, " + sig,
		"empty header name":     "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host;;x, " + sig,
		"short signature":       "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host, Signature=abc",
		"uppercase signature":   "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=host, Signature=5FA00FA31553B73EBF1942676E86291E8372FF2A2260956D9B8AAE1D763FBF31",
		"empty value":           "CLOUD4-HMAC-SHA256 Credential=, SignedHeaders=host, " + sig,
		"space before comma":    "CLOUD4-HMAC-SHA256 " + cred + " , SignedHeaders=host, " + sig,
		"not name=value":        "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders, " + sig,
		"space inside a header": "CLOUD4-HMAC-SHA256 " + cred + ", SignedHeaders=ho st, " + sig,
	}
	for name, v := range rejected {
		t.Run(name, func(t *testing.T) {
			_, err := sigv4.Cloud4.ParseAuthorization(v)
			assert.Error(t, err)
		})
	}
}

func TestScheme_Names(t *testing.T) {
	assert.Equal(t, "CLOUD4-HMAC-SHA256", sigv4.Cloud4.Algorithm())
	assert.Equal(t, "X-Cloud-Date", sigv4.Cloud4.DateHeader())
	assert.Equal(t, "X-Cloud-Content-Sha256", sigv4.Cloud4.ContentSHA256Header())
	assert.Equal(t, "XCloudContentSHA256Mismatch", sigv4.Cloud4.ContentSHA256MismatchCode())
	assert.Equal(t, "XAmzContentSHA256Mismatch", sigv4.AWS4.ContentSHA256MismatchCode())
	assert.Equal(t, "20260314/eu-central-1/s3/cloud4_request", sigv4.Cloud4.Scope(testNow, testRegion, "s3"))
}

func TestCanonicalURI(t *testing.T) {
	tests := []struct {
		path      string
		normalize bool
		want      string
	}{
		{"", false, "/"},
		{"/photos/2026/a b.jpg", false, "/photos/2026/a%20b.jpg"},
		{"/a//b/../c/./", false, "/a//b/../c/./"},
		{"/a//b/../c/./", true, "/a/c/"},
		{"/a/b/..", true, "/a/"},
		{"/ключ", false, "/%D0%BA%D0%BB%D1%8E%D1%87"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, sigv4.CanonicalURI(tt.path, tt.normalize), tt.path)
	}
}

func FuzzParseAuthorization(f *testing.F) {
	f.Add("CLOUD4-HMAC-SHA256 Credential=AKID/20260314/eu-central-1/s3/cloud4_request, SignedHeaders=host;x-cloud-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
	f.Add("CLOUD4-HMAC-SHA256 Signature=00,Credential=a/b/c/d/e,SignedHeaders=a;b")
	f.Add("")
	f.Fuzz(func(t *testing.T, value string) {
		a, err := sigv4.Cloud4.ParseAuthorization(value)
		if err != nil {
			return
		}
		// What parses formats canonically, and the canonical form parses to the same.
		again, err := sigv4.Cloud4.ParseAuthorization(a.String(sigv4.Cloud4))
		if err != nil {
			t.Fatalf("the canonical form of %q does not parse: %v", value, err)
		}
		if again.String(sigv4.Cloud4) != a.String(sigv4.Cloud4) {
			t.Fatalf("round trip changed %q", value)
		}
		if len(a.Signature) != 64 || len(a.SignedHeaders) == 0 || a.AccessKeyID == "" {
			t.Fatalf("accepted an incomplete authorization %q", value)
		}
	})
}

func TestVerifySignature_NeedsNoBodyAndCheckPayloadHoldsTheBodyToTheSignedHash(t *testing.T) {
	v := testVerifier()
	verified, err := v.VerifySignature(context.Background(), signedRequest(testNow, testSecret, testRegion, "s3"), testNow)
	require.NoError(t, err)
	assert.Equal(t, sigv4.HashHex(testBody), verified.PayloadHash, "the signed hash, declared by the header")
	assert.NoError(t, v.CheckPayload(verified, sigv4.HashHex(testBody)))

	err = v.CheckPayload(verified, sigv4.HashHex([]byte("another body")))
	var se *sigv4.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "XCloudContentSHA256Mismatch", se.Code)
	assert.Equal(t, http.StatusBadRequest, se.Status)

	_, err = v.VerifySignature(context.Background(), signedRequest(testNow, "wrong-secret", testRegion, "s3"), testNow)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, sigv4.CodeSignatureDoesNotMatch, se.Code)
}
