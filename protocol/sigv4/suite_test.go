package sigv4_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/sigv4"
)

// suiteDir is the SigV4 test suite, copied into the repository (see its README.md).
const suiteDir = "../../testdata/sigv4/v4"

type suiteContext struct {
	Credentials struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
		Token           string `json:"token"`
	} `json:"credentials"`
	ExpirationInSeconds int       `json:"expiration_in_seconds"`
	Normalize           bool      `json:"normalize"`
	Region              string    `json:"region"`
	Service             string    `json:"service"`
	SignBody            bool      `json:"sign_body"`
	Timestamp           time.Time `json:"timestamp"`
	OmitSessionToken    bool      `json:"omit_session_token"`
}

type suiteCase struct {
	name string
	ctx  suiteContext
	req  sigv4.Request
}

// readRequest parses a request.txt: the request line (whose path may hold spaces
// and raw UTF-8), headers (a line starting with whitespace continues the previous
// value, kept with its line break), a blank line and the body.
func readRequest(t *testing.T, path string) (sigv4.Request, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	head, body, _ := strings.Cut(string(raw), "\n\n")
	sc := bufio.NewScanner(strings.NewReader(head))
	require.True(t, sc.Scan())
	line := sc.Text()
	method, rest, ok := strings.Cut(line, " ")
	require.True(t, ok, line)
	target, ok := strings.CutSuffix(rest, " HTTP/1.1")
	require.True(t, ok, line)
	p, rawQuery, _ := strings.Cut(target, "?")
	query, err := url.ParseQuery(rawQuery)
	require.NoError(t, err)
	req := sigv4.Request{Method: method, Path: p, Query: query, Header: http.Header{}}
	var lastKey string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			values := req.Header[lastKey]
			values[len(values)-1] += "\n" + line
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		require.True(t, ok, line)
		if strings.EqualFold(k, "host") {
			req.Host = v
			continue
		}
		lastKey = http.CanonicalHeaderKey(k)
		req.Header.Add(lastKey, v)
	}
	req.PayloadHash = sigv4.HashHex([]byte(body))
	return req, []byte(body)
}

func loadSuite(t *testing.T) []suiteCase {
	t.Helper()
	dirs, err := os.ReadDir(suiteDir)
	require.NoError(t, err, "the suite is testdata/sigv4 (copied from the shared test data)")
	var cases []suiteCase
	for _, d := range dirs {
		dir := filepath.Join(suiteDir, d.Name())
		raw, err := os.ReadFile(filepath.Join(dir, "context.json"))
		require.NoError(t, err)
		var ctx suiteContext
		require.NoError(t, json.Unmarshal(raw, &ctx))
		req, _ := readRequest(t, filepath.Join(dir, "request.txt"))
		cases = append(cases, suiteCase{name: d.Name(), ctx: ctx, req: req})
	}
	return cases
}

func expected(t *testing.T, c suiteCase, file string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(suiteDir, c.name, file))
	require.NoError(t, err)
	return string(raw)
}

func credentials(c suiteCase) sigv4.Credentials {
	return sigv4.Credentials{
		AccessKeyID:     c.ctx.Credentials.AccessKeyID,
		SecretAccessKey: c.ctx.Credentials.SecretAccessKey,
		SessionToken:    c.ctx.Credentials.Token,
	}
}

func TestSuite_HasEveryCase(t *testing.T) {
	assert.Len(t, loadSuite(t), 38)
}

func TestSignHeaders_ReproducesTheSuite(t *testing.T) {
	for _, c := range loadSuite(t) {
		t.Run(c.name, func(t *testing.T) {
			signed := sigv4.AWS4.SignHeaders(c.req, credentials(c), c.ctx.Region, c.ctx.Service, c.ctx.Timestamp, sigv4.Options{
				NormalizePath:    c.ctx.Normalize,
				SignPayloadHash:  c.ctx.SignBody,
				OmitSessionToken: c.ctx.OmitSessionToken,
			})
			assert.Equal(t, expected(t, c, "header-canonical-request.txt"), signed.CanonicalRequest)
			assert.Equal(t, expected(t, c, "header-string-to-sign.txt"), signed.StringToSign)
			assert.Equal(t, expected(t, c, "header-signature.txt"), signed.Signature)
			assert.Contains(t, expected(t, c, "header-signed-request.txt"), "Authorization:"+signed.Header.Get("Authorization")+"\n")
		})
	}
}

func TestPresign_ReproducesTheSuite(t *testing.T) {
	for _, c := range loadSuite(t) {
		t.Run(c.name, func(t *testing.T) {
			presigned := sigv4.AWS4.Presign(c.req, credentials(c), c.ctx.Region, c.ctx.Service, c.ctx.Timestamp,
				time.Duration(c.ctx.ExpirationInSeconds)*time.Second, sigv4.Options{
					NormalizePath:    c.ctx.Normalize,
					OmitSessionToken: c.ctx.OmitSessionToken,
				})
			assert.Equal(t, expected(t, c, "query-canonical-request.txt"), presigned.CanonicalRequest)
			assert.Equal(t, expected(t, c, "query-string-to-sign.txt"), presigned.StringToSign)
			assert.Equal(t, expected(t, c, "query-signature.txt"), presigned.Signature)
			assert.Equal(t, presigned.Signature, presigned.Query.Get("X-Amz-Signature"))
		})
	}
}
