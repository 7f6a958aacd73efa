package sandbox

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/apierror"
	"github.com/apistack/apistack/servers/internal/validation"
)

// errorExtra is what the sandbox API's error body carries besides the code,
// the name and the message.
type errorExtra struct {
	// Pointer is the JSON pointer of the request body's field at fault;
	// "" for none.
	Pointer string
	// RetryAfter, when not 0, is sent as Retry-After (seconds).
	RetryAfter int
}

// apiError is an error the sandbox API answers with, in the admin API's
// shape: the code, the error name and the message, and the pointer of the
// field at fault when there is one.
type apiError = apierror.Error[sandboxapi.ErrorError, errorExtra]

func errBadRequest(format string, args ...any) *apiError {
	return apierror.New[sandboxapi.ErrorError, errorExtra](http.StatusBadRequest, sandboxapi.ErrorErrorInvalidRequest, format, args...)
}

func errForbidden(format string, args ...any) *apiError {
	return apierror.New[sandboxapi.ErrorError, errorExtra](http.StatusForbidden, sandboxapi.ErrorErrorForbidden, format, args...)
}

func errNotFound(format string, args ...any) *apiError {
	return apierror.New[sandboxapi.ErrorError, errorExtra](http.StatusNotFound, sandboxapi.ErrorErrorNotFound, format, args...)
}

// errTooManyRequests is a 429 whose Retry-After is wait seconds.
func errTooManyRequests(wait int, format string, args ...any) *apiError {
	e := apierror.New[sandboxapi.ErrorError, errorExtra](http.StatusTooManyRequests, sandboxapi.ErrorError(sandboxapi.TooManyRequestsErrorErrorTooManyRequests), format, args...)
	e.Extra.RetryAfter = wait
	return e
}

// failureNames are the sandbox API's answers to the refusals of the spec
// validation.
var failureNames = apierror.FailureNames[sandboxapi.ErrorError]{
	Invalid: sandboxapi.ErrorErrorInvalidRequest, Unauthenticated: sandboxapi.ErrorErrorUnauthorized,
	UnsupportedMediaType: sandboxapi.ErrorErrorUnsupportedContentType, NotFound: sandboxapi.ErrorErrorNotFound,
	Timeout: sandboxapi.ErrorErrorRequestTimeout,
}

// errorHandler renders every error in the sandbox API's body (the admin
// API's shape) through the handler every API shares; anything unexpected is
// logged and answered "internal" without its detail. A refusal of the spec
// validation names the body's field at fault, when it has one, as the
// pointer.
func (s *Server) errorHandler(err error, c echo.Context) {
	apierror.API[sandboxapi.ErrorError, errorExtra]{
		Name: "sandbox", Logger: s.logger,
		FailureNames: failureNames,
		Failure: func(vf *validation.Failure, _ *http.Request) *apiError {
			if inner, ok := apierror.AuthError[*apiError](vf); ok {
				return inner
			}
			status, name := failureNames.Of(vf.Kind)
			ae := &apiError{Status: status, Name: name, Message: vf.Message}
			for _, c := range vf.Causes {
				if c.In == "body" && strings.HasPrefix(c.Name, "/") {
					ae.Extra.Pointer = c.Name
					break
				}
			}
			return ae
		},
		UnavailableName: sandboxapi.ErrorError(sandboxapi.UnavailableErrorErrorUnavailable),
		InternalName:    sandboxapi.ErrorErrorInternal, InternalMessage: "an unexpected error occurred",
		Render: func(c echo.Context, ae *apiError) error {
			if ae.Extra.RetryAfter > 0 {
				c.Response().Header().Set("Retry-After", strconv.Itoa(ae.Extra.RetryAfter))
			}
			out := sandboxapi.Error{Code: ae.Status, Error: ae.Name, Message: ae.Message}
			if ae.Extra.Pointer != "" {
				out.Pointer = &ae.Extra.Pointer
			}
			return c.JSON(ae.Status, out)
		},
	}.Handler()(err, c)
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
