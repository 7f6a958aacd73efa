package sigv4_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/sigv4"
)

func TestSignRequest_SignsTheRequestAsSignHeadersAndSetsItsHeaders(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := sigv4.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"}
	opts := sigv4.Options{SignPayloadHash: true}
	for _, tc := range []struct {
		name, host, wantHost string
	}{
		{"the URL's host", "", "storage.test:9000"},
		{"the Host header", "bucket.storage.test", "bucket.storage.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPut, "http://storage.test:9000/bucket/a%20key?lifecycle=&b=2", nil)
			require.NoError(t, err)
			if tc.host != "" {
				req.Host = tc.host
			}
			req.Header.Set("Content-Type", "application/xml")
			hash := sigv4.HashHex([]byte("<LifecycleConfiguration/>"))

			want := sigv4.Cloud4.SignHeaders(sigv4.Request{
				Method: http.MethodPut, Host: tc.wantHost, Path: "/bucket/a key",
				Query:  url.Values{"lifecycle": {""}, "b": {"2"}},
				Header: http.Header{"Content-Type": {"application/xml"}}, PayloadHash: hash,
			}, c, "region-1", "s3", at, opts)
			got := sigv4.Cloud4.SignRequest(req, hash, c, "region-1", "s3", at, opts)

			assert.Equal(t, want, got)
			assert.Equal(t, "20261127T120000Z", req.Header.Get("X-Cloud-Date"))
			assert.Equal(t, hash, req.Header.Get("X-Cloud-Content-Sha256"))
			assert.Equal(t, want.Header.Get("Authorization"), req.Header.Get("Authorization"))
			assert.Contains(t, req.Header.Get("Authorization"),
				"Credential=AKID/20261127/region-1/s3/cloud4_request, SignedHeaders=content-type;host;x-cloud-content-sha256;x-cloud-date, ")
			assert.Equal(t, "application/xml", req.Header.Get("Content-Type"), "the request's own headers stay")
		})
	}
}
