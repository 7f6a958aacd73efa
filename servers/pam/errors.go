package pam

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/apierror"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// apiError is an error the PAM API answers with: a status, one of the
// service's error names, a sentence for the caller and, in Extra, the
// error_cause entries that locate what was wrong.
type apiError = apierror.Error[pamapi.ErrorName, []pamapi.ErrorCause]

func newError(status int, name pamapi.ErrorName, format string, args ...any) *apiError {
	return apierror.New[pamapi.ErrorName, []pamapi.ErrorCause](status, name, format, args...)
}

func errInvalid(in pamapi.ErrorCauseLocationType, location, format string, args ...any) *apiError {
	e := newError(http.StatusBadRequest, pamapi.ErrorNameInvalidRequest, format, args...)
	e.Extra = []pamapi.ErrorCause{{Error: e.Message, LocationType: in, Location: location}}
	return e
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

// failureNames are PAM's names for the refusals of the spec validation.
var failureNames = apierror.FailureNames[pamapi.ErrorName]{
	Invalid: pamapi.ErrorNameInvalidRequest, Unauthenticated: pamapi.ErrorNameAuthenticationError,
	UnsupportedMediaType: pamapi.ErrorNameUnsupportedContentType, NotFound: pamapi.ErrorNameResourceDoesNotExist,
}

// pamErrors is PAM's side of the shared error handler. Validation failures
// keep their causes; anything unexpected becomes unknown_error without
// detail (the detail goes to the log, never to the caller), and a database
// that cannot be reached is 503 service_offline.
var pamErrors = apierror.API[pamapi.ErrorName, []pamapi.ErrorCause]{
	Name:            "pam",
	FailureNames:    failureNames,
	UnavailableName: pamapi.ErrorNameServiceOffline,
	InternalName:    pamapi.ErrorNameUnknownError, InternalMessage: "an unexpected error occurred; retry later",
	Failure: fromValidation, Domain: fromQuota, Echo: fromEcho,
	Render: func(c echo.Context, ae *apiError) error {
		causes := ae.Extra
		if causes == nil {
			causes = []pamapi.ErrorCause{}
		}
		return c.JSON(ae.Status, pamapi.Error{Code: ae.Status, Error: ae.Name, Message: ae.Message, ErrorCause: causes})
	},
}

// errorHandler renders every error in the PAM body (see pamErrors).
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	api := pamErrors
	api.Logger = logger
	return api.Handler()
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
		return pamErrors.Unavailable()
	}
	return pamErrors.Internal()
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

func fromValidation(vf *validation.Failure, _ *http.Request) *apiError {
	// A refused token is answered as the authentication said it, with no
	// causes: error_cause locates what breaks the schema, and a request is
	// authenticated before its shape is looked at. (The error is the
	// request's own: it is returned, never changed.)
	if inner, ok := apierror.AuthError[*apiError](vf); ok {
		return inner
	}
	causes := make([]pamapi.ErrorCause, 0, len(vf.Causes))
	for _, c := range vf.Causes {
		causes = append(causes, pamapi.ErrorCause{Error: c.Message, LocationType: locationType(c.In), Location: c.Name})
	}
	status, name := failureNames.Of(vf.Kind)
	return &apiError{Status: status, Name: name, Message: vf.Message, Extra: causes}
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
