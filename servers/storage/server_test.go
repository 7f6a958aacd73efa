package storage_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/gen/storageserver"
	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/stalledbody"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

var start = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// generated returns the generated client over the signer, as clients/storage
// builds it, with the server's fake clock as the signing time.
func generated(t *testing.T, env *storagetest.Env, now func() time.Time) *storageapi.ClientWithResponses {
	t.Helper()
	return generatedFor(t, env, env.Key, now)
}

// generatedFor is generated signing with key.
func generatedFor(t *testing.T, env *storagetest.Env, key storage.AccessKey, now func() time.Time) *storageapi.ClientWithResponses {
	t.Helper()
	signer := &sigv4.Transport{
		Credentials: sigv4.Credentials{AccessKeyID: key.KeyID, SecretAccessKey: key.Secret},
		Region:      storage.DefaultRegion,
		Service:     storage.Service,
		Now:         now,
	}
	c, err := storageapi.NewClientWithResponses(env.URL, storageapi.WithHTTPClient(&http.Client{Transport: signer}))
	require.NoError(t, err)
	return c
}

func corpusFile(t *testing.T, kind, name string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("../../testdata/lifecycle", kind, name+".xml"))
	require.NoError(t, err)
	return body
}

func xmlBody(b []byte) (string, io.Reader) { return "application/xml", bytes.NewReader(b) }

// startLifecycle starts a server on a fake clock set at start and returns it
// with the generated client signing at that clock's time.
func startLifecycle(t *testing.T) (*storagetest.Env, *storageapi.ClientWithResponses) {
	t.Helper()
	fake := clock.NewFake(start)
	env := storagetest.Start(t, storagetest.Options{Clock: fake})
	return env, generated(t, env, fake.Now)
}

// putCorpus puts the corpus document kind/name as bucket's lifecycle
// configuration.
func putCorpus(t *testing.T, c *storageapi.ClientWithResponses, bucket, kind, name string) *storageapi.PutLifecycleResponse {
	t.Helper()
	ct, body := xmlBody(corpusFile(t, kind, name))
	resp, err := c.PutLifecycleWithBodyWithResponse(context.Background(), bucket, &storageapi.PutLifecycleParams{}, ct, body)
	require.NoError(t, err)
	return resp
}

// getLifecycle gets bucket's lifecycle configuration.
func getLifecycle(t *testing.T, c *storageapi.ClientWithResponses, bucket string) *storageapi.GetLifecycleResponse {
	t.Helper()
	got, err := c.GetLifecycleWithResponse(context.Background(), bucket, &storageapi.GetLifecycleParams{})
	require.NoError(t, err)
	return got
}

// storedConfigurations is how many lifecycle configurations env's server
// stores.
func storedConfigurations(t *testing.T, env *storagetest.Env) int {
	t.Helper()
	n, err := env.Operator.LifecycleCount(context.Background())
	require.NoError(t, err)
	return n
}

func errorOf(t *testing.T, body []byte) storageapi.Error {
	t.Helper()
	var e storageapi.Error
	require.NoError(t, xml.Unmarshal(body, &e), "%s", body)
	return e
}

// The server exports the generated handlers, Handler and its operator's and
// console's views only: what the admin API, the console and the tests need
// goes through those views, so the server's own methods stay free to change
// without another package coming to depend on them.
func TestServer_ExportsItsHandlersAndLifecycleOnly(t *testing.T) {
	testkit.ExportsOnly(t, &storage.Server{}, (*storageserver.StrictServerInterface)(nil), "Handler", "Operator", "Console")
}

func TestLifecycle_PutGetDeleteThroughTheGeneratedClient(t *testing.T) {
	_, c := startLifecycle(t)

	put := putCorpus(t, c, storagetest.Bucket, "valid", "expire-days-filter-prefix")
	require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)
	assert.Regexp(t, `^[0-9A-F]{16}$`, put.HTTPResponse.Header.Get("X-Cloud-Request-Id"))

	got := getLifecycle(t, c, storagetest.Bucket)
	require.Equal(t, http.StatusOK, got.StatusCode(), "%s", got.Body)
	require.NotNil(t, got.XML200)
	require.Len(t, got.XML200.Rules, 1)
	assert.Equal(t, "expire-logs", *got.XML200.Rules[0].ID)
	assert.Equal(t, int32(30), *got.XML200.Rules[0].Expiration.Days)

	del, err := c.DeleteLifecycleWithResponse(context.Background(), storagetest.Bucket, &storageapi.DeleteLifecycleParams{})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, del.StatusCode())

	got = getLifecycle(t, c, storagetest.Bucket)
	require.Equal(t, http.StatusNotFound, got.StatusCode())
	assert.Equal(t, storageapi.ErrorCodeNoSuchLifecycleConfiguration, got.XML404.Code)
}

func TestLifecycle_VersionedBucketTakesNoncurrentVersionExpiration(t *testing.T) {
	env, c := startLifecycle(t)

	put := putCorpus(t, c, storagetest.VersionedBucket, "valid", "noncurrent-version-expiration")
	require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)

	for _, tc := range []struct {
		bucket, file string
		status       int
		code         storageapi.ErrorCode
	}{
		{storagetest.Bucket, "noncurrent-version-expiration", 400, storageapi.ErrorCodeInvalidArgument},
		{storagetest.VersionedBucket, "expire-days-filter-prefix", 400, storageapi.ErrorCodeInvalidArgument},
		{storagetest.Bucket, "duplicate-ids-schema-valid", 400, storageapi.ErrorCodeInvalidArgument},
		{storagetest.Bucket, "transition", 501, storageapi.ErrorCodeNotImplemented},
		{storagetest.Bucket, "filter-tag", 501, storageapi.ErrorCodeNotImplemented},
		{"no-such-bucket", "expire-days-filter-prefix", 404, storageapi.ErrorCodeNoSuchBucket},
	} {
		t.Run(tc.bucket+"/"+tc.file, func(t *testing.T) {
			resp := putCorpus(t, c, tc.bucket, "valid", tc.file)
			require.Equal(t, tc.status, resp.StatusCode(), "%s", resp.Body)
			e := errorOf(t, resp.Body)
			assert.Equal(t, tc.code, e.Code)
			assert.Equal(t, resp.HTTPResponse.Header.Get("X-Cloud-Request-Id"), e.RequestId)
		})
	}
	assert.Equal(t, 1, storedConfigurations(t, env), "only the valid configuration is stored")
}

func TestLifecycle_ChildrenInAnyOrder(t *testing.T) {
	env, c := startLifecycle(t)

	// The AWS SDKs write a rule's Expiration before its ID.
	put := putCorpus(t, c, storagetest.Bucket, "valid", "order-aws-sdk")
	require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)

	got := getLifecycle(t, c, storagetest.Bucket)
	require.Equal(t, http.StatusOK, got.StatusCode(), "%s", got.Body)
	require.NotNil(t, got.XML200)
	require.Len(t, got.XML200.Rules, 2)
	rule := got.XML200.Rules[0]
	assert.Equal(t, "aws-order", *rule.ID)
	assert.Equal(t, "logs/", *rule.Filter.Prefix)
	assert.Equal(t, int32(30), *rule.Expiration.Days)
	assert.Equal(t, int32(7), rule.AbortIncompleteMultipartUpload.DaysAfterInitiation)
	assert.Equal(t, "tmp/", *got.XML200.Rules[1].Prefix)
	doc := string(got.Body)
	assert.Contains(t, doc, "<Rule><ID>aws-order</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration>",
		"GET returns the rule in the schema's order")

	// A duplicate Status is MalformedXML, and the stored configuration stays.
	for _, file := range []string{"duplicate-status", "duplicate-expiration"} {
		t.Run(file, func(t *testing.T) {
			resp := putCorpus(t, c, storagetest.VersionedBucket, "invalid", file)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode(), "%s", resp.Body)
			assert.Equal(t, storageapi.ErrorCodeMalformedXML, errorOf(t, resp.Body).Code)
			assert.Contains(t, errorOf(t, resp.Body).Message, "occurs more than once")
		})
	}
	assert.Equal(t, 1, storedConfigurations(t, env), "only the valid configuration is stored")
	again := getLifecycle(t, c, storagetest.Bucket)
	assert.Equal(t, string(got.Body), string(again.Body), "the stored configuration is unchanged")
}

func TestLifecycle_EveryAcceptedNamespaceIsAnsweredInTheProtocolNamespace(t *testing.T) {
	env, c := startLifecycle(t)

	for _, file := range []string{"namespace-s3", "namespace-s3-prefixed", "namespace-apistack", "no-namespace"} {
		t.Run(file, func(t *testing.T) {
			put := putCorpus(t, c, storagetest.Bucket, "valid", file)
			require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)

			got := getLifecycle(t, c, storagetest.Bucket)
			require.Equal(t, http.StatusOK, got.StatusCode(), "%s", got.Body)
			assert.Contains(t, string(got.Body), `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule>`)
			require.NotNil(t, got.XML200)
			require.Len(t, got.XML200.Rules, 1)
		})
	}

	for _, file := range []string{"wrong-namespace", "namespace-s3-root-apistack-child", "no-namespace-root-s3-child", "namespace-s3-root-unqualified-child"} {
		t.Run(file, func(t *testing.T) {
			resp := putCorpus(t, c, storagetest.VersionedBucket, "invalid", file)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode(), "%s", resp.Body)
			assert.Equal(t, storageapi.ErrorCodeMalformedXML, errorOf(t, resp.Body).Code)
		})
	}
	assert.Equal(t, 1, storedConfigurations(t, env), "no document in a namespace not accepted is stored")
}

func TestConsoleBuckets_VersioningAndLifecycleRules(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	doc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "lifecycle", "valid", "all-supported-actions.xml"))
	require.NoError(t, err)
	// The document as PutLifecycle stores it (the API's own tests cover the
	// PUT); the console reads what is stored.
	_, err = env.DB.Exec(`INSERT INTO lifecycle_configurations (bucket, document, updated_at) VALUES ($1, $2, $3)`, // $n: both engines read it
		storagetest.Bucket, string(doc), time.Now().UnixMicro())
	require.NoError(t, err)

	buckets, err := env.Server.Console().Buckets(context.Background())
	require.NoError(t, err)
	byName := map[string]storage.ConsoleBucket{}
	for _, b := range buckets {
		byName[b.Name] = b
	}
	versioned := byName[storagetest.VersionedBucket]
	assert.Equal(t, storage.Enabled, versioned.Versioning)
	assert.Empty(t, versioned.XML)
	assert.Empty(t, versioned.Rules)

	photos := byName[storagetest.Bucket]
	assert.Equal(t, storage.Unversioned, photos.Versioning)
	assert.Equal(t, string(doc), photos.XML)
	assert.Equal(t, []storage.ConsoleRule{{
		ID: "all", Status: "Enabled", Filter: `prefix "x/"`,
		Actions: []string{"expire after 90 days", "expire noncurrent versions after 10 days", "abort incomplete uploads after 2 days"},
	}}, photos.Rules)
}

func TestDeleteLifecycle_ABucketNamedWrongOrUnknownIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, bucket string
		status       int
		code         storageapi.ErrorCode
	}{
		{"unknown bucket is NoSuchBucket", "no-such-bucket", http.StatusNotFound, storageapi.ErrorCodeNoSuchBucket},
		{"malformed name is InvalidArgument", "No_Such.Bucket", http.StatusBadRequest, storageapi.ErrorCodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := startLifecycle(t)
			del, err := c.DeleteLifecycleWithResponse(context.Background(), tc.bucket, &storageapi.DeleteLifecycleParams{})
			require.NoError(t, err)
			require.Equal(t, tc.status, del.StatusCode(), "%s", del.Body)
			assert.Equal(t, tc.code, errorOf(t, del.Body).Code)
		})
	}
}

func TestPutLifecycle_ABodyThatIsNotXMLIsRefused415(t *testing.T) {
	_, c := startLifecycle(t)
	put, err := c.PutLifecycleWithBodyWithResponse(context.Background(), storagetest.Bucket,
		&storageapi.PutLifecycleParams{}, "text/plain", strings.NewReader("expire everything"))
	require.NoError(t, err)
	require.Equal(t, http.StatusUnsupportedMediaType, put.StatusCode(), "%s", put.Body)
}

// Python's botocore (boto3, the AWS CLI) sends no Content-Type on this call,
// and S3 reads the body as XML: so does the server. A wrong type stays 415.
func TestPutLifecycle_NoContentTypeIsReadAsXML(t *testing.T) {
	_, c := startLifecycle(t)
	noContentType := func(_ context.Context, req *http.Request) error {
		req.Header.Del("Content-Type")
		return nil
	}
	doc := `<LifecycleConfiguration><Rule><ID>expire-logs</ID><Filter><Prefix>logs/</Prefix></Filter>` +
		`<Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule></LifecycleConfiguration>`
	put, err := c.PutLifecycleWithBodyWithResponse(context.Background(), storagetest.Bucket,
		&storageapi.PutLifecycleParams{}, "", strings.NewReader(doc), noContentType)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, put.StatusCode(), "%s", put.Body)
	get := getLifecycle(t, c, storagetest.Bucket)
	require.Equal(t, http.StatusOK, get.StatusCode(), "%s", get.Body)
	assert.Contains(t, string(get.Body), "<ID>expire-logs</ID>")

	// Not XML without a Content-Type is the malformed document it is.
	put, err = c.PutLifecycleWithBodyWithResponse(context.Background(), storagetest.Bucket,
		&storageapi.PutLifecycleParams{}, "", strings.NewReader("expire everything"), noContentType)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, put.StatusCode(), "%s", put.Body)
	assert.Equal(t, storageapi.ErrorCodeMalformedXML, errorOf(t, put.Body).Code)
	for _, ct := range []string{"text/plain", "application/json"} {
		put, err = c.PutLifecycleWithBodyWithResponse(context.Background(), storagetest.Bucket,
			&storageapi.PutLifecycleParams{}, ct, strings.NewReader(doc))
		require.NoError(t, err)
		require.Equal(t, http.StatusUnsupportedMediaType, put.StatusCode(), "%s: %s", ct, put.Body)
	}
}

// A database that fails answers 500 InternalError on every operation, with
// no detail of the failure, whether it fails while the access key is read
// or later: the caller is not to blame. One that is gone answers 503
// ServiceUnavailable with Retry-After.
func TestLifecycle_AFailingDatabaseAnswers500WithoutItsDetail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fail   func(t *testing.T, env *storagetest.Env)
		status int
		code   storageapi.ErrorCode
	}{
		{"tables gone", func(t *testing.T, env *storagetest.Env) { testdb.DropTables(t, env.DB) }, http.StatusInternalServerError, storageapi.ErrorCodeInternalError},
		{"database gone", func(t *testing.T, env *storagetest.Env) { require.NoError(t, env.DB.Close()) }, http.StatusServiceUnavailable, storageapi.ErrorCodeServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) { failingDatabase(t, tc.fail, tc.status, tc.code) })
	}
}

func failingDatabase(t *testing.T, fail func(t *testing.T, env *storagetest.Env), status int, code storageapi.ErrorCode) {
	env, c := startLifecycle(t)
	fail(t, env)

	put := putCorpus(t, c, storagetest.Bucket, "valid", "expire-days-filter-prefix")
	get := getLifecycle(t, c, storagetest.Bucket)
	del, err := c.DeleteLifecycleWithResponse(context.Background(), storagetest.Bucket, &storageapi.DeleteLifecycleParams{})
	require.NoError(t, err)
	for name, r := range map[string]struct {
		status int
		body   []byte
	}{"PUT": {put.StatusCode(), put.Body}, "GET": {get.StatusCode(), get.Body}, "DELETE": {del.StatusCode(), del.Body}} {
		assert.Equal(t, status, r.status, "%s: %s", name, r.body)
		e := errorOf(t, r.body)
		assert.Equal(t, code, e.Code, name)
		assert.NotContains(t, string(r.body), "sql", "%s: the failure's detail stays in the log", name)
	}
}

// TestEveryBody_ThatStallsIs408RequestTimeout sends every operation that
// takes a body, signed by the tests' key for the whole body it announces, a
// body that stalls past the read timeout: each is answered 408
// RequestTimeout in the storage API's XML error body, checked against the
// spec.
func TestEveryBody_ThatStallsIs408RequestTimeout(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	stalledbody.Run(t, stalledbody.Target{
		Spec:       storageserver.GetSpec,
		Handler:    env.Server.Handler,
		PathValues: map[string]string{"bucket": storagetest.Bucket},
		Authorize: func(t *testing.T, op stalledbody.Operation, req *http.Request) {
			require.Equal(t, "PutLifecycle", op.ID, "the one operation of the API that takes a body")
			req.URL.RawQuery = "lifecycle="
			hash := sigv4.HashHex([]byte(strings.Repeat(" ", stalledbody.DeclaredLength)))
			sigv4.Cloud4.SignRequest(req, hash, sigv4.Credentials{AccessKeyID: env.Key.KeyID, SecretAccessKey: env.Key.Secret},
				storage.DefaultRegion, storage.Service, time.Now(), sigv4.Options{SignPayloadHash: true})
		},
		CheckBody: func(t *testing.T, _ stalledbody.Operation, header http.Header, body []byte) {
			var e struct {
				XMLName   xml.Name
				Code      storageapi.ErrorCode
				Message   string
				RequestID string `xml:"RequestId"`
			}
			require.NoError(t, xml.Unmarshal(body, &e), string(body))
			assert.Equal(t, "Error", e.XMLName.Local)
			assert.Equal(t, storageapi.ErrorCodeRequestTimeout, e.Code)
			assert.NotEmpty(t, e.Message)
			assert.Equal(t, header.Get("X-Cloud-Request-Id"), e.RequestID, "the body names the request as its header does")
		},
	})
}
