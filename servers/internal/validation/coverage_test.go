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

const coverageSpec = `
openapi: 3.0.3
info: {title: test, version: "1"}
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        "200":
          description: found
          content: {application/json: {schema: {type: object, required: [id], properties: {id: {type: integer}}}}}
        "404":
          description: none
          content: {application/json: {schema: {type: object, required: [error], properties: {error: {type: string}}}}}
`

func TestMiddleware_RecordsEveryPairHeldToTheSpec(t *testing.T) {
	var mu sync.Mutex
	var got []contractcoverage.Pair
	watchPairs(t, &mu, &got)
	var bodies []any
	origFields := recordFields
	recordFields = func(api string, op *openapi3.Operation, status int, _ http.Header, value any, _ []byte) error {
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, value)
		return nil
	}
	t.Cleanup(func() { recordFields = origFields })

	doc, err := openapi3.NewLoader().LoadFromData([]byte(coverageSpec))
	require.NoError(t, err)
	var violations int
	mw, err := New(Options{Spec: doc, API: "things", ValidateResponses: true,
		Authenticate: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
		OnResponseViolation: func(*http.Request, int, error) {
			mu.Lock()
			defer mu.Unlock()
			violations++
		}})
	require.NoError(t, err)
	e := echo.New()
	e.Use(mw)
	e.GET("/things/:id", func(c echo.Context) error {
		switch c.Param("id") {
		case "1":
			return c.JSONBlob(http.StatusOK, []byte(`{"id":1}`))
		case "2":
			return c.JSONBlob(http.StatusOK, []byte(`{"id":"two"}`)) // breaks the spec
		}
		return c.JSONBlob(http.StatusNotFound, []byte(`{"error":"none"}`))
	})
	for _, id := range []string{"1", "1", "2", "3"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/things/"+id, strings.NewReader("")))
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, violations)
	assert.Equal(t, []contractcoverage.Pair{
		{API: "things", OperationID: "getThing", Status: 200},
		{API: "things", OperationID: "getThing", Status: 200},
		{API: "things", OperationID: "getThing", Status: 404},
	}, got, "a pair is recorded for each answer held to the spec, never for one that breaks it")
	assert.Equal(t, []any{
		map[string]any{"id": 1.0}, map[string]any{"id": 1.0}, map[string]any{"error": "none"},
	}, bodies, "the fields of each answer held to the spec are recorded from the body as it was checked")
}

// watchPairs makes the middleware's coverage record append to got (under mu)
// instead of the record's file, until the test ends.
func watchPairs(t *testing.T, mu *sync.Mutex, got *[]contractcoverage.Pair) {
	orig := recordCoverage
	recordCoverage = func(api, op string, status int) error {
		mu.Lock()
		defer mu.Unlock()
		*got = append(*got, contractcoverage.Pair{API: api, OperationID: op, Status: status})
		return nil
	}
	t.Cleanup(func() { recordCoverage = orig })
}

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
