package fax

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/faxserver"
	"github.com/apistack/apistack/servers/internal/stalledbody"
)

// TestEveryBody_ThatStallsIs408RequestTimeout sends every operation that
// takes a body, with the account's API key, a body that stalls past the
// read timeout: each is answered 408 request_timeout in the fax API's
// error body, checked against the spec.
func TestEveryBody_ThatStallsIs408RequestTimeout(t *testing.T) {
	h := newHarness(t)
	stalledbody.Run(t, stalledbody.Target{
		Spec:       faxserver.GetSpec,
		Handler:    h.srv.Handler,
		PathValues: map[string]string{"id": h.app},
		Bearer:     h.key,
		CheckBody: func(t *testing.T, _ stalledbody.Operation, _ http.Header, body []byte) {
			e := stalledbody.DecodeJSON[faxapi.Errors](t, body)
			require.Len(t, e.Errors, 1, string(body))
			assert.Equal(t, faxapi.ErrorCodeRequestTimeout, e.Errors[0].Code)
			assert.NotEmpty(t, e.Errors[0].Title)
		},
	})
}
