package apierror

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// StatusError is an API's own error type: it knows the HTTP status it is
// answered with.
type StatusError interface {
	error
	HTTPStatus() int
}

// Errors is one API's side of the error handler every API shares (see
// ErrorHandler): how its errors are found, how the failures of the common
// middleware map onto them, and how one is written. E is the API's error
// type (a pointer to its apiError).
type Errors[E StatusError] struct {
	// API names the API in the log ("pam").
	API string
	// Logger receives the internal errors; nil means slog.Default().
	Logger *slog.Logger
	// Failure maps a request the spec validation refused (see
	// FailureAnswers for the kind switch most APIs share).
	Failure func(vf *validation.Failure, r *http.Request) E
	// Domain maps the errors the API answers that are not E (a quota, a
	// signature check); nil, or false, for none.
	Domain func(err error) (E, bool)
	// Echo maps echo's own errors (a route the router lacks, a body it could
	// not bind); false leaves them an internal error.
	Echo func(he *echo.HTTPError) (E, bool)
	// Unavailable is the answer to an error of a database that cannot be
	// reached or written (see apiserver.Unavailable): a 503, which the handler sends
	// with Retry-After. Nil leaves such errors internal.
	Unavailable func() E
	// Internal is the answer to anything unexpected: it carries no detail
	// (the detail goes to the log, never to the caller).
	Internal func() E
	// Render writes e as the response.
	Render func(c echo.Context, e E) error
}

// ErrorHandler returns the echo.HTTPErrorHandler of one API. Nothing is
// written once the response is committed; a caller that went away gets a
// bare 499 (apiserver.StatusClientClosedRequest, for the request log); an
// internal error is logged with its detail and answered without it. Errors
// are looked for in this order: the API's own (E, anywhere in the chain), a
// validation.Failure, the API's domain errors, a cancelled context, echo's
// own, a database that cannot be reached, anything else.
func ErrorHandler[E StatusError](api Errors[E]) echo.HTTPErrorHandler {
	logger := api.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		req := c.Request()
		e, gone := api.Answer(err, req)
		if gone {
			c.Response().WriteHeader(apiserver.StatusClientClosedRequest)
			return
		}
		if e.HTTPStatus() == http.StatusServiceUnavailable && c.Response().Header().Get("Retry-After") == "" {
			c.Response().Header().Set("Retry-After", apiserver.RetryAfterUnavailable)
		}
		if e.HTTPStatus() == http.StatusInternalServerError {
			logger.ErrorContext(req.Context(), "internal error", "api", api.API, "path", req.URL.Path, "err", err)
		}
		if werr := api.Render(c, e); werr != nil {
			logger.WarnContext(req.Context(), "write error response", "api", api.API, "err", werr)
		}
	}
}

// Answer finds the API's answer to err, as ErrorHandler does; gone reports a
// caller that went away (nothing is answered then, and e may be nil).
func (api Errors[E]) Answer(err error, r *http.Request) (e E, gone bool) {
	if errors.As(err, &e) {
		return e, e.HTTPStatus() == apiserver.StatusClientClosedRequest
	}
	var vf *validation.Failure
	if errors.As(err, &vf) {
		e = api.Failure(vf, r)
		return e, e.HTTPStatus() == apiserver.StatusClientClosedRequest
	}
	if api.Domain != nil {
		if de, ok := api.Domain(err); ok {
			return de, false
		}
	}
	if errors.Is(err, context.Canceled) {
		return e, true
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && api.Echo != nil {
		if ee, ok := api.Echo(he); ok {
			return ee, false
		}
	}
	if api.Unavailable != nil && apiserver.Unavailable(err) {
		return api.Unavailable(), false
	}
	return api.Internal(), false
}

// AuthError returns the API's own error that the operation's Authenticate
// function refused a request with, when vf is such a refusal and the error is
// of type E: the API answers it as it is.
func AuthError[E StatusError](vf *validation.Failure) (E, bool) {
	var e E
	if vf.Kind != validation.KindUnauthenticated {
		return e, false
	}
	return e, errors.As(vf.AuthErr, &e)
}

// FailureNames are an API's error names for the kinds of validation
// failure. The statuses are the same for every API: 401 unauthenticated, 415
// unsupported media type, 404 no such path, 405 method not allowed, 413 too
// large, 408 a body that did not arrive in time, and InvalidStatus (0: 400)
// for a parameter or body that breaks the schema, 400 for a body that did not
// arrive whole (KindMalformed, named Invalid's name). A zero name is
// Invalid's.
type FailureNames[N comparable] struct {
	Invalid, Unauthenticated, UnsupportedMediaType, NotFound, MethodNotAllowed, TooLarge, Timeout N
	// InvalidStatus is the status of KindInvalid; 0 means 400.
	InvalidStatus int
}

// Of returns the status and the name of a failure of kind k; a kind not
// listed above is answered as KindInvalid.
func (fn FailureNames[N]) Of(k validation.Kind) (int, N) {
	status, name := http.StatusBadRequest, fn.Invalid
	if fn.InvalidStatus != 0 {
		status = fn.InvalidStatus
	}
	for _, f := range [...]struct {
		kind   validation.Kind
		status int
		name   N
	}{
		{validation.KindUnauthenticated, http.StatusUnauthorized, fn.Unauthenticated},
		{validation.KindUnsupportedMediaType, http.StatusUnsupportedMediaType, fn.UnsupportedMediaType},
		{validation.KindNotFound, http.StatusNotFound, fn.NotFound},
		{validation.KindMethodNotAllowed, http.StatusMethodNotAllowed, fn.MethodNotAllowed},
		{validation.KindTooLarge, http.StatusRequestEntityTooLarge, fn.TooLarge},
		{validation.KindTimeout, http.StatusRequestTimeout, fn.Timeout},
		{validation.KindMalformed, http.StatusBadRequest, fn.Invalid},
	} {
		if f.kind == k {
			status, name = f.status, f.name
			break
		}
	}
	var zero N
	if name == zero {
		name = fn.Invalid
	}
	return status, name
}
