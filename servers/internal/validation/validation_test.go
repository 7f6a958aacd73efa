package validation_test

import (
	"context"
	"errors"
	"io"
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

	"github.com/apistack/apistack/servers/internal/validation"
)

const spec = `
openapi: 3.0.3
info: {title: test, version: "1"}
servers: [{url: "http://example.invalid/api"}]
paths:
  /things:
    post:
      security: [{key: []}]
      parameters:
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 10, default: 5}}
        - {name: tags, in: query, schema: {type: array, items: {type: string}}}
        - {name: flag, in: query, allowEmptyValue: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [name]
              properties:
                name: {type: string, minLength: 1}
      responses:
        "201":
          description: created
          headers:
            X-Count: {required: true, schema: {type: integer}}
          content:
            application/json:
              schema:
                type: object
                required: [id]
                properties:
                  id: {type: integer}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
`

// server runs the middleware in front of a handler that echoes the body it
// was given and answers with reply, recording response violations.
type server struct {
	url        string
	reply      string
	sawBody    string
	mu         sync.Mutex
	violations []error
	// onViolation, when set, runs inside the violation hook after the
	// violation is recorded.
	onViolation func()
}

func start(t *testing.T) *server {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	require.NoError(t, err)
	s := &server{reply: `{"id":1}`}
	mw, err := validation.New(validation.Options{
		Spec: doc,
		Authenticate: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
			if in.RequestValidationInput.Request.Header.Get("X-Key") != "secret" {
				return errors.New("wrong key")
			}
			return nil
		},
		ValidateResponses: true,
		OnResponseViolation: func(_ *http.Request, _ int, err error) {
			s.mu.Lock()
			s.violations = append(s.violations, err)
			hook := s.onViolation
			s.mu.Unlock()
			if hook != nil {
				hook()
			}
		},
	})
	require.NoError(t, err)
	e := echo.New()
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		var f *validation.Failure
		if errors.As(err, &f) {
			_ = c.String(400+int(f.Kind), f.Message)
			return
		}
		_ = c.String(http.StatusInternalServerError, err.Error())
	}
	e.Use(mw)
	e.POST("/api/things", func(c echo.Context) error {
		b, _ := io.ReadAll(c.Request().Body)
		s.sawBody = string(b)
		c.Response().Header().Set("X-Count", "3")
		return c.Blob(http.StatusCreated, "application/json", []byte(s.reply))
	})
	hs := httptest.NewServer(e)
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

func (s *server) post(t *testing.T, query, key, contentType, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+"/api/things"+query, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	if key != "" {
		req.Header.Set("X-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header
}

func TestMiddleware_ClassifiesRefusedRequests(t *testing.T) {
	s := start(t)
	tests := []struct {
		name, query, key, contentType, body string
		kind                                validation.Kind
		message                             string
	}{
		{"no credentials", "", "", "application/json", `{"name":"a"}`, validation.KindUnauthenticated, "wrong key"},
		{"security checked first", "?limit=99", "", "application/json", `{}`, validation.KindUnauthenticated, "wrong key"},
		{"parameter out of range", "?limit=99", "secret", "application/json", `{"name":"a"}`, validation.KindInvalid, "query limit"},
		{"empty value (not read as the default)", "?limit=", "secret", "application/json", `{"name":"a"}`, validation.KindInvalid, "query limit: an empty value is not allowed"},
		{"repeated parameter", "?limit=1&limit=2", "secret", "application/json", `{"name":"a"}`, validation.KindInvalid, "query limit: given 2 times; it takes one value"},
		{"security checked before the query's shape", "?limit=", "", "application/json", `{"name":"a"}`, validation.KindUnauthenticated, "wrong key"},
		{"missing property", "", "secret", "application/json", `{}`, validation.KindInvalid, `property "name" is missing`},
		{"unknown property", "", "secret", "application/json", `{"name":"a","Name":"b"}`, validation.KindInvalid, "Name"},
		// A JSON content type whose body is not JSON is an invalid body (400),
		// not an unsupported type.
		{"duplicate key", "", "secret", "application/json", `{"name":"a","name":"b"}`, validation.KindInvalid, "duplicate key"},
		{"not JSON", "", "secret", "application/json", `name=a`, validation.KindInvalid, "not valid JSON"},
		{"JSON syntax error", "", "secret", "application/json", `{"name": `, validation.KindInvalid, "not valid JSON"},
		{"wrong content type", "", "secret", "text/plain", `{"name":"a"}`, validation.KindUnsupportedMediaType, "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.sawBody = ""
			status, body, _ := s.post(t, tt.query, tt.key, tt.contentType, tt.body)
			assert.Equal(t, 400+int(tt.kind), status, body)
			assert.Contains(t, body, tt.message)
			assert.Empty(t, s.sawBody, "a refused request never reaches the handler")
		})
	}
}

func TestMiddleware_QueryShapesTheSpecAllows(t *testing.T) {
	s := start(t)
	for _, query := range []string{"?tags=a&tags=b", "?flag=", "?flag", "?limit=3&flag=&tags=x", ""} {
		status, body, _ := s.post(t, query, "secret", "application/json", `{"name":"a"}`)
		assert.Equal(t, http.StatusCreated, status, "%s: %s", query, body)
	}
}

func TestMiddleware_HandlerGetsTheCanonicalValidatedBody(t *testing.T) {
	s := start(t)
	status, _, _ := s.post(t, "?limit=2", "secret", "application/json", "  {\"name\" : \"caf\\u00e9\"}\n")
	require.Equal(t, http.StatusCreated, status)
	assert.Equal(t, `{"name":"café"}`, s.sawBody)
}

func TestMiddleware_ReportsBadResponsesAndStillSendsThem(t *testing.T) {
	s := start(t)
	s.reply = `{"id":"not a number"}`
	status, body, header := s.post(t, "", "secret", "application/json", `{"name":"a"}`)
	assert.Equal(t, http.StatusCreated, status)
	assert.Equal(t, s.reply, body, "the answer goes out as the handler wrote it")
	assert.Equal(t, "21", header.Get("Content-Length"))
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.violations, 1)
	assert.ErrorContains(t, s.violations[0], "value must be an integer")

	s.violations = nil
	s.reply = `{"id":7}`
	s.mu.Unlock()
	status, _, _ = s.post(t, "", "secret", "application/json", `{"name":"a"}`)
	s.mu.Lock()
	assert.Equal(t, http.StatusCreated, status)
	assert.Empty(t, s.violations, "a valid answer reports nothing")
}

func TestMiddleware_UnknownRoutes(t *testing.T) {
	s := start(t)
	resp, err := http.Get(s.url + "/api/things")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 400+int(validation.KindMethodNotAllowed), resp.StatusCode)
	resp, err = http.Get(s.url + "/api/nowhere")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 400+int(validation.KindNotFound), resp.StatusCode)
}

func TestMiddleware_ReportsBeforeTheCallerSeesTheEnd(t *testing.T) {
	// The hook holds the report until the test lets it go: the caller must
	// not get to the end of the answer (nor even its headers) before then.
	s := start(t)
	s.reply = `{"id":"x"}`
	reported := make(chan struct{})
	release := make(chan struct{})
	s.mu.Lock()
	s.onViolation = func() {
		close(reported)
		<-release
	}
	s.mu.Unlock()
	type result struct {
		status int
		body   string
	}
	done := make(chan result, 1)
	go func() {
		status, body, _ := s.post(t, "", "secret", "application/json", `{"name":"a"}`)
		done <- result{status, body}
	}()
	<-reported
	select {
	case r := <-done:
		t.Fatalf("the caller read the answer (%d %s) while its violation was being reported", r.status, r.body)
	default:
	}
	close(release)
	r := <-done
	assert.Equal(t, http.StatusCreated, r.status)
	assert.Equal(t, s.reply, r.body)
}
