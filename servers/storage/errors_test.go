package storage_test

import (
	"context"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/gen/storageserver"
	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/internal/stalledbody"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

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
