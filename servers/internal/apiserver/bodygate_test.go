package apiserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/internal/validation"
)

const (
	token       = "right"
	importPath  = "/restaurant/restaurants/7d3e6a1c-5b2f-4c8e-9a41-2f6b8c0d1e37/configuration"
	importLimit = 4 << 10
	otherLimit  = 1 << 10
)

// countingBody counts the bytes read from the body the caller sent.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// server is the admin API's spec served by apiserver with a bearer check,
// a Before middleware counting what is read of each body, an AfterAuth one
// recording whether it saw a body, and handlers that read the whole body.
type server struct {
	url      string
	read     atomic.Int64
	sawBody  atomic.Bool
	failures chan error
}

// bearerToken accepts the requests that carry the test token.
func bearerToken(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.RequestValidationInput.Request.Header.Get("Authorization") != "Bearer "+token {
		return errors.New("wrong token")
	}
	return nil
}

func start(t *testing.T) *server {
	t.Helper()
	spec, err := adminserver.GetSpec()
	require.NoError(t, err)
	s := &server{failures: make(chan error, 16)}
	e, err := apiserver.New(apiserver.Config{
		Name: "admin",
		Validation: validation.Options{
			Spec:         spec,
			Authenticate: bearerToken,
		},
		ErrorHandler: func(err error, c echo.Context) {
			status := http.StatusInternalServerError
			var f *validation.Failure
			if errors.As(err, &f) {
				status = map[validation.Kind]int{
					validation.KindInvalid: 400, validation.KindUnauthenticated: 401, validation.KindNotFound: 404,
					validation.KindMethodNotAllowed: 405, validation.KindTooLarge: 413, validation.KindUnsupportedMediaType: 415,
				}[f.Kind]
			}
			_ = c.String(status, err.Error())
		},
		Before: []echo.MiddlewareFunc{func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				req := c.Request()
				if req.Body != nil && req.Body != http.NoBody {
					counted := req.WithContext(req.Context())
					counted.Body = countingBody{req.Body, &s.read}
					c.SetRequest(counted)
				}
				return next(c)
			}
		}},
		AfterAuth: []echo.MiddlewareFunc{func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				s.sawBody.Store(c.Request().Body != http.NoBody)
				return next(c)
			}
		}},
		MaxBodyBytes: otherLimit,
		BodyLimits:   map[string]int64{"ImportRestaurantConfiguration": importLimit},
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	readAll := func(c echo.Context) error {
		data, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return fmt.Errorf("reading the body: %w", err)
		}
		return c.String(http.StatusOK, fmt.Sprint(len(data)))
	}
	e.PUT("/restaurant/restaurants/:guid/configuration", readAll)
	e.POST("/pam/teams", readAll)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *server) send(t *testing.T, method, path, auth string, body io.Reader, length int64) (int, string) {
	t.Helper()
	s.read.Store(0)
	s.sawBody.Store(false)
	resp, data := testkit.Request{Method: method, URL: s.url + path, Token: auth, Body: body, ContentType: "application/json", ContentLength: length}.Do(t)
	return resp.StatusCode, string(data)
}

func TestGate_AnUnauthenticatedCallersBodyIsNeverRead(t *testing.T) {
	s := start(t)
	body := `{"menus": []}` + strings.Repeat(" ", 2000)
	for _, auth := range []string{"", "wrong"} {
		for _, length := range []int64{int64(len(body)), -1} {
			status, msg := s.send(t, http.MethodPut, importPath, auth, strings.NewReader(body), length)
			assert.Equal(t, http.StatusUnauthorized, status, msg)
			assert.Zero(t, s.read.Load(), "bytes of the body read (token %q, length %d)", auth, length)
			assert.False(t, s.sawBody.Load(), "AfterAuth saw no body")
		}
	}

	status, msg := s.send(t, http.MethodPut, importPath, token, strings.NewReader(body), int64(len(body)))
	assert.Equal(t, http.StatusOK, status, msg)
	assert.Equal(t, int64(len(body)), s.read.Load())
	assert.True(t, s.sawBody.Load())
}

func TestGate_NoSuchOperationReadsNoBody(t *testing.T) {
	s := start(t)
	status, _ := s.send(t, http.MethodPost, "/no/such/operation", token, strings.NewReader(`{"a": 1}`), -1)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Zero(t, s.read.Load())
}

func TestGate_EachOperationHasItsOwnLimit(t *testing.T) {
	s := start(t)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		open   string
		limit  int
	}{
		{"configuration import", http.MethodPut, importPath, `{"menus": [`, importLimit},
		{"any other", http.MethodPost, "/pam/teams", `{"name": "`, otherLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			under := tc.open[:len(tc.open)-1] + `"x"}` // a small valid-looking document
			if strings.HasSuffix(tc.open, "[") {
				under = `{"menus": []}`
			}
			under += strings.Repeat(" ", tc.limit-len(under))
			status, msg := s.send(t, tc.method, tc.path, token, strings.NewReader(under), int64(len(under)))
			assert.NotEqual(t, http.StatusRequestEntityTooLarge, status, "a body of exactly the limit: %s", msg)

			over := tc.open + strings.Repeat(" ", tc.limit)
			status, msg = s.send(t, tc.method, tc.path, token, strings.NewReader(over), int64(len(over)))
			assert.Equal(t, http.StatusRequestEntityTooLarge, status, msg)
			assert.Zero(t, s.read.Load(), "a declared length over the limit is refused unread")
			assert.Contains(t, msg, fmt.Sprint(tc.limit))

			status, msg = s.send(t, tc.method, tc.path, token, strings.NewReader(over), -1)
			assert.Equal(t, http.StatusRequestEntityTooLarge, status, "a chunked body read past the limit: %s", msg)
			assert.LessOrEqual(t, s.read.Load(), int64(tc.limit)+1, "read no further than the limit")
		})
	}
}
