package validation

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/contractcoverage"
)

const stalledSpec = `
openapi: 3.0.3
info: {title: test, version: "1"}
paths:
  /things:
    post:
      operationId: createThing
      responses:
        "201":
          description: made
          content: {application/json: {schema: {type: object, required: [id], properties: {id: {type: integer}}}}}
        "408":
          description: the body stalled
          content: {application/json: {schema: {type: object, required: [error], properties: {error: {type: string}}}}}
`

// TestMiddleware_ChecksAndRecordsTheAnswerToAStalledBody: net/http ends a
// request's context when its body stalls past the read timeout, yet sends
// the 408, which the caller reads; that answer is held to the spec and
// recorded like any other, while any other answer to a request whose
// context ended (a caller gone) is neither.
func TestMiddleware_ChecksAndRecordsTheAnswerToAStalledBody(t *testing.T) {
	var mu sync.Mutex
	var got []contractcoverage.Pair
	orig := recordCoverage
	recordCoverage = func(api, op string, status int) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, contractcoverage.Pair{API: api, OperationID: op, Status: status})
		return nil
	}
	t.Cleanup(func() { recordCoverage = orig })

	doc, err := openapi3.NewLoader().LoadFromData([]byte(stalledSpec))
	require.NoError(t, err)
	var violations []int
	mw, err := New(Options{Spec: doc, API: "things", ValidateResponses: true,
		Authenticate: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
		OnResponseViolation: func(_ *http.Request, status int, _ error) {
			mu.Lock()
			defer mu.Unlock()
			violations = append(violations, status)
		}})
	require.NoError(t, err)
	e := echo.New()
	e.Use(mw)
	e.POST("/things", func(c echo.Context) error {
		switch c.QueryParam("answer") {
		case "stalled":
			return c.JSONBlob(http.StatusRequestTimeout, []byte(`{"error":"the body stalled"}`))
		case "stalled-off-spec":
			return c.JSONBlob(http.StatusRequestTimeout, []byte(`{"message":"the body stalled"}`))
		}
		return c.JSONBlob(http.StatusCreated, []byte(`{"id":1}`))
	})
	for _, answer := range []string{"stalled", "stalled-off-spec", "made"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // as net/http does when reading the body fails
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/things?answer="+answer, strings.NewReader(""))
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []contractcoverage.Pair{{API: "things", OperationID: "createThing", Status: http.StatusRequestTimeout}}, got,
		"the 408 held to the spec is recorded; the answer to a caller gone is not checked")
	assert.Equal(t, []int{http.StatusRequestTimeout}, violations, "a 408 that breaks the spec is reported")
}
