package apierror_test

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/apierror"
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

func testErrors(logger *slog.Logger) apierror.Errors[*testError] {
	names := apierror.FailureNames[string]{Invalid: "invalid", Unauthenticated: "unauthenticated", NotFound: "no_such_path"}
	return apierror.Errors[*testError]{
		API: "test", Logger: logger,
		Failure: func(vf *validation.Failure, _ *http.Request) *testError {
			if inner, ok := apierror.AuthError[*testError](vf); ok {
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
			handler := apierror.ErrorHandler(testErrors(slog.New(slog.NewTextHandler(&logs, nil))))
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
	names := apierror.FailureNames[string]{Invalid: "bad", NotFound: "none", MethodNotAllowed: "method", InvalidStatus: http.StatusUnprocessableEntity}
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

// name is a stand-in API's error names; cause is what its body carries
// besides.
type (
	name  string
	cause struct{ Field string }
)

type genericError = apierror.Error[name, cause]

// genericAPI renders "status name message field" as text, so each case reads
// what the handler chose.
func genericAPI(logger *slog.Logger) apierror.API[name, cause] {
	return apierror.API[name, cause]{
		Name: "test", Logger: logger,
		FailureNames:    apierror.FailureNames[name]{Invalid: "invalid", Unauthenticated: "unauthenticated", NotFound: "no_such_path"},
		UnavailableName: "offline",
		InternalName:    "internal", InternalMessage: "something went wrong",
		Render: func(c echo.Context, e *genericError) error {
			return c.String(e.Status, fmt.Sprintf("%s|%s|%s", e.Name, e.Message, e.Extra.Field))
		},
	}
}

func TestAPI_Handler(t *testing.T) {
	withCause := apierror.New[name, cause](http.StatusConflict, "taken", "the name %q is taken", "a")
	withCause.Extra.Field = "name"
	cases := []struct {
		name       string
		api        func(apierror.API[name, cause]) apierror.API[name, cause]
		err        error
		wantStatus int
		wantBody   string
		wantLog    bool
	}{
		{"the API's own error, wrapped, with its extra", nil, fmt.Errorf("store: %w", withCause),
			http.StatusConflict, `taken|the name "a" is taken|name`, false},
		{"a validation failure, named by FailureNames", nil, &validation.Failure{Kind: validation.KindNotFound, Message: "no route"},
			http.StatusNotFound, "no_such_path|no route|", false},
		{"an authentication refusal with the API's own error is answered as it is", nil,
			&validation.Failure{Kind: validation.KindUnauthenticated, Message: "refused",
				AuthErr: apierror.New[name, cause](http.StatusUnauthorized, "token_expired", "the token expired")},
			http.StatusUnauthorized, "token_expired|the token expired|", false},
		{"an authentication refusal without it", nil, &validation.Failure{Kind: validation.KindUnauthenticated, Message: "no token", AuthErr: errors.New("missing")},
			http.StatusUnauthorized, "unauthenticated|no token|", false},
		{"echo's error below 500 keeps its status under the Invalid name", nil, echo.NewHTTPError(http.StatusBadRequest, "cannot bind"),
			http.StatusBadRequest, "invalid|cannot bind|", false},
		{"echo's error from 500 is internal", nil, echo.NewHTTPError(http.StatusBadGateway, "upstream"),
			http.StatusInternalServerError, "internal|something went wrong|", true},
		{"the API's own echo mapping", func(a apierror.API[name, cause]) apierror.API[name, cause] {
			a.Echo = func(he *echo.HTTPError) (*genericError, bool) {
				return apierror.New[name, cause](http.StatusNotFound, "gone", "no such thing"), he.Code == http.StatusNotFound
			}
			return a
		}, echo.NewHTTPError(http.StatusNotFound, "Not Found"), http.StatusNotFound, "gone|no such thing|", false},
		{"the API's own failure mapping", func(a apierror.API[name, cause]) apierror.API[name, cause] {
			a.Failure = func(vf *validation.Failure, _ *http.Request) *genericError {
				e := apierror.New[name, cause](http.StatusUnprocessableEntity, "invalid", "%s", vf.Message)
				e.Extra.Field = vf.Causes[0].Name
				return e
			}
			return a
		}, &validation.Failure{Kind: validation.KindInvalid, Message: "bad", Causes: []validation.Cause{{In: "query", Name: "count", Message: "too big"}}},
			http.StatusUnprocessableEntity, "invalid|bad|count", false},
		{"a domain error", func(a apierror.API[name, cause]) apierror.API[name, cause] {
			a.Domain = func(err error) (*genericError, bool) {
				return apierror.New[name, cause](http.StatusForbidden, "quota", "over quota"), errors.Is(err, errQuota)
			}
			return a
		}, fmt.Errorf("insert: %w", errQuota), http.StatusForbidden, "quota|over quota|", false},
		{"a database that cannot be reached", nil, fmt.Errorf("query: %w", driver.ErrBadConn),
			http.StatusServiceUnavailable, "offline|" + apiserver.UnavailableMessage + "|", false},
		{"anything else is internal, its detail only in the log", nil, errors.New("disk on fire"),
			http.StatusInternalServerError, "internal|something went wrong|", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			api := genericAPI(slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.api != nil {
				api = tc.api(api)
			}
			rec := httptest.NewRecorder()
			api.Handler()(tc.err, echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/x", nil), rec))
			assert.Equal(t, tc.wantStatus, rec.Code)
			assert.Equal(t, tc.wantBody, rec.Body.String())
			if tc.wantStatus == http.StatusServiceUnavailable {
				assert.Equal(t, apiserver.RetryAfterUnavailable, rec.Header().Get("Retry-After"))
			}
			if tc.wantLog {
				assert.Contains(t, logs.String(), tc.err.Error(), "the detail goes to the log")
			} else {
				assert.Empty(t, logs.String())
			}
		})
	}
}

var errQuota = errors.New("quota")

func TestError_IsReachableAndNamesItself(t *testing.T) {
	e := apierror.New[name, cause](http.StatusForbidden, "forbidden", "team %s may not", "acme")
	wrapped := fmt.Errorf("handler: %w", e)
	var got *genericError
	require.ErrorAs(t, wrapped, &got)
	assert.Same(t, e, got)
	assert.Equal(t, http.StatusForbidden, got.HTTPStatus())
	assert.Equal(t, "403 forbidden: team acme may not", got.Error())

	api := genericAPI(nil)
	assert.Equal(t, &genericError{Status: http.StatusServiceUnavailable, Name: "offline", Message: apiserver.UnavailableMessage}, api.Unavailable())
	assert.Equal(t, &genericError{Status: http.StatusInternalServerError, Name: "internal", Message: "something went wrong"}, api.Internal())
}
