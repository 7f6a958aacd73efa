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
