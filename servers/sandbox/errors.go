package sandbox

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/validation"
)

// apiError is an error the sandbox API answers with, in the admin API's
// shape.
type apiError struct {
	Status  int
	Name    sandboxapi.ErrorError
	Message string
}

func (e *apiError) Error() string { return e.Message }

func errBadRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, sandboxapi.ErrorErrorInvalidRequest, fmt.Sprintf(format, args...)}
}

func errForbidden(format string, args ...any) *apiError {
	return &apiError{http.StatusForbidden, sandboxapi.ErrorErrorForbidden, fmt.Sprintf(format, args...)}
}

func errNotFound(format string, args ...any) *apiError {
	return &apiError{http.StatusNotFound, sandboxapi.ErrorErrorNotFound, fmt.Sprintf(format, args...)}
}

func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := &apiError{http.StatusInternalServerError, sandboxapi.ErrorErrorInternal, "an unexpected error occurred"}
	var vf *validation.Failure
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &vf):
		ae = &apiError{http.StatusBadRequest, sandboxapi.ErrorErrorInvalidRequest, vf.Message}
		switch vf.Kind {
		case validation.KindUnauthenticated:
			ae.Status, ae.Name = http.StatusUnauthorized, sandboxapi.ErrorErrorUnauthorized
		case validation.KindUnsupportedMediaType:
			ae.Status, ae.Name = http.StatusUnsupportedMediaType, sandboxapi.ErrorErrorUnsupportedContentType
		case validation.KindNotFound:
			ae.Status, ae.Name = http.StatusNotFound, sandboxapi.ErrorErrorNotFound
		case validation.KindMethodNotAllowed:
			ae.Status = http.StatusMethodNotAllowed
		case validation.KindTooLarge:
			ae.Status = http.StatusRequestEntityTooLarge
		}
	case errors.As(err, &he) && he.Code < 500:
		ae = &apiError{he.Code, sandboxapi.ErrorErrorInvalidRequest, fmt.Sprint(he.Message)}
	default:
		s.logger.ErrorContext(c.Request().Context(), "sandbox: internal error", "path", c.Request().URL.Path, "err", err)
	}
	if err := c.JSON(ae.Status, sandboxapi.Error{Code: ae.Status, Error: ae.Name, Message: ae.Message}); err != nil {
		s.logger.WarnContext(c.Request().Context(), "sandbox: write error response", "err", err)
	}
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
