package sandbox

import (
	"encoding/base64"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/apierror"
)

// apiError is an error the sandbox API answers with, in the admin API's
// shape: the code, the error name and the message.
type apiError = apierror.Error[sandboxapi.ErrorError, struct{}]

func errBadRequest(format string, args ...any) *apiError {
	return apierror.New[sandboxapi.ErrorError, struct{}](http.StatusBadRequest, sandboxapi.ErrorErrorInvalidRequest, format, args...)
}

func errForbidden(format string, args ...any) *apiError {
	return apierror.New[sandboxapi.ErrorError, struct{}](http.StatusForbidden, sandboxapi.ErrorErrorForbidden, format, args...)
}

func errNotFound(format string, args ...any) *apiError {
	return apierror.New[sandboxapi.ErrorError, struct{}](http.StatusNotFound, sandboxapi.ErrorErrorNotFound, format, args...)
}

// errorHandler renders every error in the sandbox API's body (the admin
// API's shape) through the handler every API shares; anything unexpected is
// logged and answered "internal" without its detail.
func (s *Server) errorHandler(err error, c echo.Context) {
	apierror.API[sandboxapi.ErrorError, struct{}]{
		Name: "sandbox", Logger: s.logger,
		FailureNames: apierror.FailureNames[sandboxapi.ErrorError]{
			Invalid: sandboxapi.ErrorErrorInvalidRequest, Unauthenticated: sandboxapi.ErrorErrorUnauthorized,
			UnsupportedMediaType: sandboxapi.ErrorErrorUnsupportedContentType, NotFound: sandboxapi.ErrorErrorNotFound,
			Timeout: sandboxapi.ErrorErrorRequestTimeout,
		},
		UnavailableName: sandboxapi.ErrorError(sandboxapi.UnavailableErrorErrorUnavailable),
		InternalName:    sandboxapi.ErrorErrorInternal, InternalMessage: "an unexpected error occurred",
		Render: func(c echo.Context, ae *apiError) error {
			return c.JSON(ae.Status, sandboxapi.Error{Code: ae.Status, Error: ae.Name, Message: ae.Message})
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
