// Package apierror is the one error type every API's handlers return, and
// the error handler built on it. Each API answers errors in the body its
// spec gives (PAM's {code, error, message, error_cause}, the fax API's
// {errors: [...]}, the storage API's XML <Error>, ...), but what a handler
// needs to say is the same everywhere: a status, one of the API's error
// names, a sentence for the caller, and now and then something the API's
// body carries besides. So the type is written once, generic over the
// API's names (N, its spec's enum) and over that something (X), and each API
// writes only how its body is rendered.
package apierror

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// Error is an error an API answers with.
type Error[N ~string, X any] struct {
	// Status is the HTTP status of the answer.
	Status int
	// Name is the API's name of the error (PAM's "error", the restaurant
	// API's messageKey, the storage API's Code, ...).
	Name N
	// Message is the sentence for the caller.
	Message string
	// Extra is what the API's body carries besides (PAM's causes, the
	// storage resource, ...); struct{} for an API with nothing more.
	Extra X
}

// New returns the error with status and name whose message is format
// applied to args.
func New[N ~string, X any](status int, name N, format string, args ...any) *Error[N, X] {
	return &Error[N, X]{Status: status, Name: name, Message: fmt.Sprintf(format, args...)}
}

// Error implements error: the status, the name and the message, for logs.
func (e *Error[N, X]) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Name, e.Message) }

// HTTPStatus is the status e is answered with.
func (e *Error[N, X]) HTTPStatus() int { return e.Status }

// API is one API's side of the error handler: its names for the answers
// every API gives and how it renders its body. Failure, Domain and Echo are
// optional (see each).
type API[N ~string, X any] struct {
	// Name names the API in the log ("pam").
	Name string
	// Logger receives the internal errors; nil means slog.Default().
	Logger *slog.Logger
	// FailureNames name the refusals of the spec validation.
	FailureNames FailureNames[N]
	// UnavailableName names the 503 answered while the database cannot be
	// reached or written (see Unavailable).
	UnavailableName N
	// InternalName and InternalMessage are the 500 answered to anything
	// unexpected (see Internal).
	InternalName    N
	InternalMessage string
	// Failure maps a request the spec validation refused. Nil answers the
	// error an Authenticate function refused with as it is, and any other
	// refusal with FailureNames and the validator's message.
	Failure func(vf *validation.Failure, r *http.Request) *Error[N, X]
	// Domain maps the errors the API answers that are not *Error[N, X] (a
	// quota, a signature check); nil for none.
	Domain func(err error) (*Error[N, X], bool)
	// Echo maps echo's own errors (a route the router lacks, a body it could
	// not bind). Nil answers those below 500 with their status, FailureNames'
	// Invalid name and echo's message, and leaves the others internal.
	Echo func(he *echo.HTTPError) (*Error[N, X], bool)
	// Render writes e as the API's body.
	Render func(c echo.Context, e *Error[N, X]) error
}

// Errors is the configuration of the shared handler (ErrorHandler)
// for a.
func (a API[N, X]) Errors() Errors[*Error[N, X]] {
	failure := a.Failure
	if failure == nil {
		failure = func(vf *validation.Failure, _ *http.Request) *Error[N, X] {
			if inner, ok := AuthError[*Error[N, X]](vf); ok {
				return inner
			}
			status, name := a.FailureNames.Of(vf.Kind)
			return &Error[N, X]{Status: status, Name: name, Message: vf.Message}
		}
	}
	echoErr := a.Echo
	if echoErr == nil {
		echoErr = func(he *echo.HTTPError) (*Error[N, X], bool) {
			return &Error[N, X]{Status: he.Code, Name: a.FailureNames.Invalid, Message: fmt.Sprint(he.Message)}, he.Code < http.StatusInternalServerError
		}
	}
	return Errors[*Error[N, X]]{
		API: a.Name, Logger: a.Logger,
		Failure: failure, Domain: a.Domain, Echo: echoErr, Render: a.Render,
		Unavailable: a.Unavailable, Internal: a.Internal,
	}
}

// Unavailable is the answer while the database cannot be reached or
// written: 503 with apiserver.UnavailableMessage (the handler adds
// Retry-After).
func (a API[N, X]) Unavailable() *Error[N, X] {
	return &Error[N, X]{Status: http.StatusServiceUnavailable, Name: a.UnavailableName, Message: apiserver.UnavailableMessage}
}

// Internal is the answer to anything unexpected: 500 with InternalMessage,
// never the error's detail (that goes to the log).
func (a API[N, X]) Internal() *Error[N, X] {
	return &Error[N, X]{Status: http.StatusInternalServerError, Name: a.InternalName, Message: a.InternalMessage}
}

// Handler is the echo.HTTPErrorHandler of a (see ErrorHandler).
func (a API[N, X]) Handler() echo.HTTPErrorHandler { return ErrorHandler(a.Errors()) }
