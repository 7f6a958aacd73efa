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
