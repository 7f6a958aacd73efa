package apiserver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// testError is a stand-in API's own error.
type testError struct {
	status int
	name   string
}

func (e *testError) Error() string   { return fmt.Sprintf("%d %s", e.status, e.name) }
func (e *testError) HTTPStatus() int { return e.status }

var errDomain = errors.New("a domain error")

func testErrors(logger *slog.Logger) apiserver.Errors[*testError] {
	names := apiserver.FailureNames[string]{Invalid: "invalid", Unauthenticated: "unauthenticated", NotFound: "no_such_path"}
	return apiserver.Errors[*testError]{
		API: "test", Logger: logger,
		Failure: func(vf *validation.Failure, _ *http.Request) *testError {
			if inner, ok := apiserver.AuthError[*testError](vf); ok {
				return inner
			}
			status, name := names.Of(vf.Kind)
			return &testError{status, name}
		},
		Domain: func(err error) (*testError, bool) {
			return &testError{http.StatusConflict, "domain"}, errors.Is(err, errDomain)
		},
		Echo: func(he *echo.HTTPError) (*testError, bool) {
			return &testError{he.Code, "echo"}, he.Code == http.StatusBadRequest
		},
		Internal: func() *testError { return &testError{http.StatusInternalServerError, "internal"} },
		Render: func(c echo.Context, e *testError) error {
			return c.String(e.status, e.name)
		},
	}
}

func TestErrorHandler(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		commit     bool
		wantStatus int
		wantBody   string
		wantLog    bool
	}{
		{"the API's own error, wrapped", fmt.Errorf("ctx: %w", &testError{http.StatusForbidden, "forbidden"}), false, http.StatusForbidden, "forbidden", false},
		{"a validation failure", &validation.Failure{Kind: validation.KindNotFound}, false, http.StatusNotFound, "no_such_path", false},
		{"an unlisted failure kind is KindInvalid's", &validation.Failure{Kind: validation.KindTooLarge}, false, http.StatusRequestEntityTooLarge, "invalid", false},
		{"an authentication refusal with the API's error", &validation.Failure{Kind: validation.KindUnauthenticated, AuthErr: &testError{http.StatusUnauthorized, "token_expired"}}, false, http.StatusUnauthorized, "token_expired", false},
		{"a domain error", fmt.Errorf("store: %w", errDomain), false, http.StatusConflict, "domain", false},
		{"a caller gone away", fmt.Errorf("query: %w", context.Canceled), false, apiserver.StatusClientClosedRequest, "", false},
		{"the API's own 499", &testError{apiserver.StatusClientClosedRequest, "gone"}, false, apiserver.StatusClientClosedRequest, "", false},
		{"echo's error the API maps", echo.NewHTTPError(http.StatusBadRequest, "bad"), false, http.StatusBadRequest, "echo", false},
		{"echo's error the API leaves", echo.NewHTTPError(http.StatusTeapot, "tea"), false, http.StatusInternalServerError, "internal", true},
		{"anything else", errors.New("disk on fire"), false, http.StatusInternalServerError, "internal", true},
		{"a committed response is left alone", errors.New("late"), true, http.StatusAccepted, "already", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			handler := apiserver.ErrorHandler(testErrors(slog.New(slog.NewTextHandler(&logs, nil))))
			rec := httptest.NewRecorder()
			c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/x", nil), rec)
			if tc.commit {
				require.NoError(t, c.String(http.StatusAccepted, "already"))
			}
			handler(tc.err, c)
			assert.Equal(t, tc.wantStatus, rec.Code)
			assert.Equal(t, tc.wantBody, rec.Body.String())
			if tc.wantLog {
				assert.Contains(t, logs.String(), "internal error")
				assert.Contains(t, logs.String(), tc.err.Error(), "the detail goes to the log")
			} else {
				assert.Empty(t, logs.String())
			}
		})
	}
}

func TestFailureNames_Of(t *testing.T) {
	names := apiserver.FailureNames[string]{Invalid: "bad", NotFound: "none", MethodNotAllowed: "method", InvalidStatus: http.StatusUnprocessableEntity}
	cases := []struct {
		kind       validation.Kind
		wantStatus int
		wantName   string
	}{
		{validation.KindInvalid, http.StatusUnprocessableEntity, "bad"},
		{validation.KindUnauthenticated, http.StatusUnauthorized, "bad"},
		{validation.KindUnsupportedMediaType, http.StatusUnsupportedMediaType, "bad"},
		{validation.KindNotFound, http.StatusNotFound, "none"},
		{validation.KindMethodNotAllowed, http.StatusMethodNotAllowed, "method"},
		{validation.KindTooLarge, http.StatusRequestEntityTooLarge, "bad"},
		{validation.Kind(99), http.StatusUnprocessableEntity, "bad"},
	}
	for _, tc := range cases {
		status, name := names.Of(tc.kind)
		assert.Equal(t, tc.wantStatus, status, "kind %d", tc.kind)
		assert.Equal(t, tc.wantName, name, "kind %d", tc.kind)
	}
}
