package storage_test

import (
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
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

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
			now := time.Now().UTC()
			req.Header.Set("X-Cloud-Date", now.Format(sigv4.TimeFormat))
			req.Header.Set("X-Cloud-Content-Sha256", hash)
			signed := sigv4.HeadersToSign(req.Header)
			cr := sigv4.CanonicalRequest(req.Method, sigv4.CanonicalURI(req.URL.Path, false), sigv4.CanonicalQuery(req.URL.Query()),
				sigv4.CanonicalHeaders(req.Header, req.URL.Host, signed), strings.Join(signed, ";"), hash)
			scope := sigv4.Cloud4.Scope(now, storage.DefaultRegion, storage.Service)
			sig := sigv4.Signature(sigv4.Cloud4.SigningKey(env.Key.Secret, now, storage.DefaultRegion, storage.Service),
				sigv4.Cloud4.StringToSign(now, scope, cr))
			req.Header.Set("Authorization", sigv4.Cloud4.AuthorizationHeader(env.Key.KeyID, scope, signed, sig))
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
