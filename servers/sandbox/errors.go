package sandbox

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// apiError is an error the sandbox API answers with, in the admin API's
// shape.
type apiError struct {
	Status  int
	Name    sandboxapi.ErrorError
	Message string
	// RetryAfter, when not 0, is sent as Retry-After (seconds).
	RetryAfter int
}

func (e *apiError) Error() string { return e.Message }

func errBadRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Name: sandboxapi.ErrorErrorInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

func errForbidden(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusForbidden, Name: sandboxapi.ErrorErrorForbidden, Message: fmt.Sprintf(format, args...)}
}

func errNotFound(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Name: sandboxapi.ErrorErrorNotFound, Message: fmt.Sprintf(format, args...)}
}

// errTooManyRequests is a 429 whose Retry-After is wait seconds.
func errTooManyRequests(wait int, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Name: sandboxapi.ErrorError(sandboxapi.TooManyRequestsErrorErrorTooManyRequests),
		Message: fmt.Sprintf(format, args...), RetryAfter: wait}
}

// HTTPStatus is the status e is answered with.
func (e *apiError) HTTPStatus() int { return e.Status }

// failureNames are the sandbox API's answers to the failures of the spec
// validation.
var failureNames = apiserver.FailureNames[sandboxapi.ErrorError]{
	Invalid: sandboxapi.ErrorErrorInvalidRequest, Unauthenticated: sandboxapi.ErrorErrorUnauthorized,
	UnsupportedMediaType: sandboxapi.ErrorErrorUnsupportedContentType, NotFound: sandboxapi.ErrorErrorNotFound,
	Timeout: sandboxapi.ErrorErrorRequestTimeout,
}

// errorHandler renders every error in the sandbox API's body (the admin
// API's shape) through the handler every API shares; anything unexpected is
// logged and answered "internal" without its detail.
func (s *Server) errorHandler(err error, c echo.Context) {
	apiserver.ErrorHandler(apiserver.Errors[*apiError]{
		API: "sandbox", Logger: s.logger,
		Failure: func(vf *validation.Failure, _ *http.Request) *apiError {
			status, name := failureNames.Of(vf.Kind)
			return &apiError{Status: status, Name: name, Message: vf.Message}
		},
		Echo: func(he *echo.HTTPError) (*apiError, bool) {
			return &apiError{Status: he.Code, Name: sandboxapi.ErrorErrorInvalidRequest, Message: fmt.Sprint(he.Message)}, he.Code < 500
		},
		Unavailable: func() *apiError {
			return &apiError{Status: http.StatusServiceUnavailable, Name: sandboxapi.ErrorError(sandboxapi.UnavailableErrorErrorUnavailable), Message: apiserver.UnavailableMessage}
		},
		Internal: func() *apiError {
			return &apiError{Status: http.StatusInternalServerError, Name: sandboxapi.ErrorErrorInternal, Message: "an unexpected error occurred"}
		},
		Render: func(c echo.Context, ae *apiError) error {
			if ae.RetryAfter > 0 {
				c.Response().Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
			}
			return c.JSON(ae.Status, sandboxapi.Error{Code: ae.Status, Error: ae.Name, Message: ae.Message})
		},
	})(err, c)
}

// bodyText is a journaled body as the API shows it: the text when it is
// UTF-8 (a truncated body's last, cut character dropped), else its base64.
func bodyText(b []byte, truncated bool) (string, sandboxapi.BodyEncoding) {
	if utf8.Valid(b) {
		return string(b), sandboxapi.BodyEncodingUtf8
	}
	// The cap may have cut a character in two: the text up to it is text.
	for cut := 1; truncated && cut < utf8.UTFMax && cut < len(b); cut++ {
		if utf8.Valid(b[:len(b)-cut]) {
			return string(b[:len(b)-cut]), sandboxapi.BodyEncodingUtf8
		}
	}
	return base64.StdEncoding.EncodeToString(b), sandboxapi.BodyEncodingBase64
}
