package validation

import (
	"context"
	"errors"
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
	watchPairs(t, &mu, &got)

	var violations []int
	mw, err := New(stalledOptions(t, &mu, &violations))
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

// TestSplit_ChecksTheAnswerOfAMiddlewareBetweenItsHalves: a middleware
// between the answers half and the requests half that refuses a request
// (here: it read the body, as PAM's JSON-object check does) has its answer
// rendered by the error handler, held to the spec and recorded; one that
// answers nothing (a fault answered further out) has nothing checked.
func TestSplit_ChecksTheAnswerOfAMiddlewareBetweenItsHalves(t *testing.T) {
	var mu sync.Mutex
	var got []contractcoverage.Pair
	watchPairs(t, &mu, &got)

	var violations []int
	answers, requests, err := Split(stalledOptions(t, &mu, &violations))
	require.NoError(t, err)
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		body := `{"error":"the body stalled"}`
		if err.Error() == "off spec" {
			body = `{"message":"the body stalled"}`
		}
		_ = c.JSONBlob(http.StatusRequestTimeout, []byte(body))
	}
	e.Use(answers)
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			switch c.QueryParam("refuse") {
			case "stalled":
				return errors.New("stalled")
			case "off-spec":
				return errors.New("off spec")
			case "silently":
				return nil
			}
			return next(c)
		}
	})
	e.Use(requests)
	e.POST("/things", func(c echo.Context) error { return c.JSONBlob(http.StatusCreated, []byte(`{"id":1}`)) })
	statuses := map[string]int{}
	for _, refuse := range []string{"stalled", "off-spec", "silently", "no"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/things?refuse="+refuse, strings.NewReader("")))
		statuses[refuse] = rec.Code
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]int{"stalled": 408, "off-spec": 408, "silently": 200, "no": 201}, statuses)
	assert.Equal(t, []contractcoverage.Pair{
		{API: "things", OperationID: "createThing", Status: http.StatusRequestTimeout},
		{API: "things", OperationID: "createThing", Status: http.StatusCreated},
	}, got, "the refusal held to the spec is recorded as the handler's answer is")
	assert.Equal(t, []int{http.StatusRequestTimeout}, violations, "the refusal that breaks the spec is reported")
}

// stalledOptions are the middleware's options for stalledSpec: every
// request authenticated, answers checked, each violation's status appended
// to violations (under mu).
func stalledOptions(t *testing.T, mu *sync.Mutex, violations *[]int) Options {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(stalledSpec))
	require.NoError(t, err)
	return Options{Spec: doc, API: "things", ValidateResponses: true,
		Authenticate: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
		OnResponseViolation: func(_ *http.Request, status int, _ error) {
			mu.Lock()
			defer mu.Unlock()
			*violations = append(*violations, status)
		}}
}
