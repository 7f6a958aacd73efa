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

// HTTPStatus is the status e is answered with.
func (e *apiError) HTTPStatus() int { return e.Status }

// errorHandler renders every error in the PAM body. Validation failures keep
// their causes; anything unexpected becomes unknown_error without detail (the
// detail goes to the log, never to the caller).
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	return apiserver.ErrorHandler(apiserver.Errors[*apiError]{
		API: "pam", Logger: logger,
		Failure: fromValidation, Domain: fromQuota, Echo: fromEcho,
		Internal:    errUnknown,
		Unavailable: errUnavailable,
		Render: func(c echo.Context, ae *apiError) error {
			causes := ae.Causes
			if causes == nil {
				causes = []pamapi.ErrorCause{}
			}
			return c.JSON(ae.Status, pamapi.Error{Code: ae.Status, Error: ae.Name, Message: ae.Message, ErrorCause: causes})
		},
	})
}

// errUnavailable is the answer while the database cannot be reached: 503
// service_offline (the error handler adds Retry-After).
func errUnavailable() *apiError {
	return newError(http.StatusServiceUnavailable, pamapi.ErrorNameServiceOffline, "%s", apiserver.UnavailableMessage)
}

func errUnknown() *apiError {
	return newError(http.StatusInternalServerError, pamapi.ErrorNameUnknownError, "an unexpected error occurred; retry later")
}

// lookupError is the answer to a failed lookup outside a handler (resolving
// a token): client_closed_connection when the caller went away, otherwise
// service_offline when the database cannot be reached, otherwise
// unknown_error.
func lookupError(err error) *apiError {
	if errors.Is(err, context.Canceled) {
		return newError(apiserver.StatusClientClosedRequest, pamapi.ErrorNameClientClosedConnection, "the client closed the connection")
	}
	if apiserver.Unavailable(err) {
		return errUnavailable()
	}
	return errUnknown()
}

func fromQuota(err error) (*apiError, bool) {
	var qe *quotaError
	if errors.As(err, &qe) {
		return newError(http.StatusForbidden, pamapi.ErrorNameQuotaExceeded, "the team's %s", qe.Error()), true
	}
	return nil, false
}

func fromEcho(he *echo.HTTPError) (*apiError, bool) {
	msg := fmt.Sprint(he.Message)
	switch he.Code {
	case http.StatusBadRequest:
		return newError(http.StatusBadRequest, pamapi.ErrorNameInvalidRequest, "%s", msg), true
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return newError(http.StatusNotFound, pamapi.ErrorNameResourceDoesNotExist, "no such resource"), true
	case http.StatusUnsupportedMediaType:
		return newError(http.StatusUnsupportedMediaType, pamapi.ErrorNameUnsupportedContentType, "%s", msg), true
	}
	return nil, false
}

// failureAnswers are PAM's answers to the failures of the spec validation.
var failureNames = apiserver.FailureNames[pamapi.ErrorName]{
	Invalid: pamapi.ErrorNameInvalidRequest, Unauthenticated: pamapi.ErrorNameAuthenticationError,
	UnsupportedMediaType: pamapi.ErrorNameUnsupportedContentType, NotFound: pamapi.ErrorNameResourceDoesNotExist,
}

func fromValidation(vf *validation.Failure, _ *http.Request) *apiError {
	causes := make([]pamapi.ErrorCause, 0, len(vf.Causes))
	for _, c := range vf.Causes {
		causes = append(causes, pamapi.ErrorCause{Error: c.Message, LocationType: locationType(c.In), Location: c.Name})
	}
	if inner, ok := apiserver.AuthError[*apiError](vf); ok {
		inner.Causes = causes
		return inner
	}
	status, name := failureNames.Of(vf.Kind)
	return &apiError{Status: status, Name: name, Message: vf.Message, Causes: causes}
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
