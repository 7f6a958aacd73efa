package pam

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// apiError is an error the PAM API answers with: a status, one of the
// service's error names and a sentence for the caller.
type apiError struct {
	Status  int
	Name    pamapi.ErrorName
	Message string
	Causes  []pamapi.ErrorCause
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Name, e.Message) }

func newError(status int, name pamapi.ErrorName, format string, args ...any) *apiError {
	return &apiError{Status: status, Name: name, Message: fmt.Sprintf(format, args...)}
}

func errInvalid(in pamapi.ErrorCauseLocationType, location, format string, args ...any) *apiError {
	msg := fmt.Sprintf(format, args...)
	return &apiError{
		Status: http.StatusBadRequest, Name: pamapi.ErrorNameInvalidRequest, Message: msg,
		Causes: []pamapi.ErrorCause{{Error: msg, LocationType: in, Location: location}},
	}
}

func errAuthentication(format string, args ...any) *apiError {
	return newError(http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError, format, args...)
}

func errAuthorization(format string, args ...any) *apiError {
	return newError(http.StatusUnauthorized, pamapi.ErrorNameAuthorizationError, format, args...)
}

func errForbidden(format string, args ...any) *apiError {
	return newError(http.StatusForbidden, pamapi.ErrorNameForbiddenError, format, args...)
}

func errNoSuch(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, pamapi.ErrorNameResourceDoesNotExist, format, args...)
}

// errorHandler renders every error in the PAM body. Validation failures keep
// their causes; anything unexpected becomes unknown_error without detail (the
// detail goes to the log, never to the caller).
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		ae := toAPIError(err)
		if ae.Status == http.StatusInternalServerError {
			logger.ErrorContext(c.Request().Context(), "internal error", "path", c.Request().URL.Path, "err", err)
		}
		if ae.Causes == nil {
			ae.Causes = []pamapi.ErrorCause{}
		}
		body := pamapi.Error{Code: ae.Status, Error: ae.Name, Message: ae.Message, ErrorCause: ae.Causes}
		if ae.Status == apiserver.StatusClientClosedRequest {
			c.Response().WriteHeader(ae.Status)
			return
		}
		if ae.Status == http.StatusServiceUnavailable && ae.Name == pamapi.ErrorNameServiceOffline && c.Response().Header().Get("Retry-After") == "" {
			c.Response().Header().Set("Retry-After", apiserver.RetryAfterUnavailable)
		}
		if err := c.JSON(ae.Status, body); err != nil {
			logger.WarnContext(c.Request().Context(), "write error response", "err", err)
		}
	}
}

func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var qe *quotaError
	if errors.As(err, &qe) {
		return newError(http.StatusForbidden, pamapi.ErrorNameQuotaExceeded, "the team's %s", qe.Error())
	}
	var vf *validation.Failure
	if errors.As(err, &vf) {
		return fromValidation(vf)
	}
	if errors.Is(err, context.Canceled) {
		return newError(apiserver.StatusClientClosedRequest, pamapi.ErrorNameClientClosedConnection, "the client closed the connection")
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := fmt.Sprint(he.Message)
		switch he.Code {
		case http.StatusBadRequest:
			return newError(http.StatusBadRequest, pamapi.ErrorNameInvalidRequest, "%s", msg)
		case http.StatusNotFound, http.StatusMethodNotAllowed:
			return newError(http.StatusNotFound, pamapi.ErrorNameResourceDoesNotExist, "no such resource")
		case http.StatusUnsupportedMediaType:
			return newError(http.StatusUnsupportedMediaType, pamapi.ErrorNameUnsupportedContentType, "%s", msg)
		}
	}
	if apiserver.Unavailable(err) {
		return newError(http.StatusServiceUnavailable, pamapi.ErrorNameServiceOffline, "%s", apiserver.UnavailableMessage)
	}
	return newError(http.StatusInternalServerError, pamapi.ErrorNameUnknownError, "an unexpected error occurred; retry later")
}

func fromValidation(vf *validation.Failure) *apiError {
	causes := make([]pamapi.ErrorCause, 0, len(vf.Causes))
	for _, c := range vf.Causes {
		causes = append(causes, pamapi.ErrorCause{Error: c.Message, LocationType: locationType(c.In), Location: c.Name})
	}
	ae := &apiError{Message: vf.Message, Causes: causes}
	switch vf.Kind {
	case validation.KindUnauthenticated:
		var inner *apiError
		if errors.As(vf.AuthErr, &inner) {
			inner.Causes = causes
			return inner
		}
		ae.Status, ae.Name = http.StatusUnauthorized, pamapi.ErrorNameAuthenticationError
	case validation.KindUnsupportedMediaType:
		ae.Status, ae.Name = http.StatusUnsupportedMediaType, pamapi.ErrorNameUnsupportedContentType
	case validation.KindNotFound:
		ae.Status, ae.Name = http.StatusNotFound, pamapi.ErrorNameResourceDoesNotExist
	case validation.KindMethodNotAllowed:
		ae.Status, ae.Name = http.StatusMethodNotAllowed, pamapi.ErrorNameInvalidRequest
	case validation.KindTooLarge:
		ae.Status, ae.Name = http.StatusRequestEntityTooLarge, pamapi.ErrorNameInvalidRequest
	case validation.KindTimeout:
		ae.Status, ae.Name = http.StatusRequestTimeout, pamapi.ErrorNameInvalidRequest
	default:
		ae.Status, ae.Name = http.StatusBadRequest, pamapi.ErrorNameInvalidRequest
	}
	return ae
}

func locationType(in string) pamapi.ErrorCauseLocationType {
	switch in {
	case "query":
		return pamapi.ErrorCauseLocationTypeQuery
	case "path":
		return pamapi.ErrorCauseLocationTypePath
	case "header", "cookie":
		return pamapi.ErrorCauseLocationTypeHeader
	default:
		return pamapi.ErrorCauseLocationTypeBody
	}
}
