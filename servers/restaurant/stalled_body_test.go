package restaurant_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/gen/restaurantserver"
	"github.com/apistack/apistack/servers/internal/stalledbody"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
)

// TestEveryBody_ThatStallsIs408RequestTimeout sends every operation that
// takes a body (the login, which carries the credentials in it) a body that
// stalls past the read timeout: each is answered 408 REQUEST_TIMEOUT in the
// restaurant API's error body, checked against the spec, with canRetry set.
func TestEveryBody_ThatStallsIs408RequestTimeout(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{})
	stalledbody.Run(t, stalledbody.Target{
		Spec:       restaurantserver.GetSpec,
		Handler:    env.Server.Handler,
		PathValues: map[string]string{"restaurantGuid": env.Restaurant},
		CheckBody: func(t *testing.T, _ stalledbody.Operation, _ http.Header, body []byte) {
			e := stalledbody.DecodeJSON[restaurantapi.Error](t, body)
			assert.Equal(t, http.StatusRequestTimeout, e.Status)
			assert.Equal(t, restaurantapi.ErrorKeyREQUESTTIMEOUT, e.MessageKey)
			assert.NotEmpty(t, e.RequestId)
			assert.True(t, e.CanRetry, "the same request, its body sent in time, may succeed")
		},
	})
}
