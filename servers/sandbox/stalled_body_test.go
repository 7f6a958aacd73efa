package sandbox_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/stalledbody"
	"github.com/apistack/apistack/servers/stack"
)

// TestEveryBody_ThatStallsIs408RequestTimeout sends every operation that
// takes a body, with the admin token and on a sandbox that exists, a body
// that stalls past the read timeout: each is answered 408 request_timeout
// in the sandbox API's error body, checked against the spec.
func TestEveryBody_ThatStallsIs408RequestTimeout(t *testing.T) {
	ctx := context.Background()
	st, handlers, urls := stacktest.OpenServed(t, stack.Config{
		DataDir: t.TempDir(), OpenDB: stacktest.OpenDB(t), Clock: clock.NewFake(time.Now()),
		Logger: slog.New(slog.DiscardHandler), ValidateResponses: true,
		OnResponseViolation: func(api string, r *http.Request, status int, err error) {
			t.Errorf("%s response %d to %s %s breaks its spec: %v", api, status, r.Method, r.URL.Path, err)
		},
	})
	admin, err := sandboxapi.NewClientWithResponses(urls[stack.Admin], sandboxapi.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+st.AdminToken)
			return nil
		}))
	require.NoError(t, err)
	created, err := admin.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))

	stalledbody.Run(t, stalledbody.Target{
		Spec:       sandboxserver.GetSpec,
		Handler:    func() (http.Handler, error) { return handlers[stack.Admin], nil },
		PathValues: map[string]string{"id": created.JSON201.Id},
		Bearer:     st.AdminToken,
		CheckBody: func(t *testing.T, _ stalledbody.Operation, _ http.Header, body []byte) {
			e := stalledbody.DecodeJSON[sandboxapi.Error](t, body)
			assert.Equal(t, http.StatusRequestTimeout, e.Code)
			assert.Equal(t, sandboxapi.ErrorErrorRequestTimeout, e.Error)
			assert.NotEmpty(t, e.Message)
		},
	})
}
