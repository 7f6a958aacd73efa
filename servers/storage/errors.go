package storage

import (
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/internal/lifecycledoc"
	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/internal/apierror"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// apiError is an error the storage API answers with: a status, an
// object-storage code (Name), a sentence for the caller and, in Extra, the
// resource it concerns ("" means the request's path).
type apiError = apierror.Error[storageapi.ErrorCode, string]

func newError(status int, code storageapi.ErrorCode, resource, format string, args ...any) *apiError {
	e := apierror.New[storageapi.ErrorCode, string](status, code, format, args...)
	e.Extra = resource
	return e
}

// errorHandler renders every error as an object-storage <Error> document.
// Anything unexpected becomes InternalError without detail (the detail goes to
// the log, never to the caller).
func (s *Server) errorHandler(err error, c echo.Context) {
	storageErrors(s.logger).Handler()(err, c)
}

// storageErrors is the storage API's side of the shared error handler.
func storageErrors(logger *slog.Logger) apierror.API[storageapi.ErrorCode, string] {
	return apierror.API[storageapi.ErrorCode, string]{
		Name: "storage", Logger: logger,
		Failure: func(vf *validation.Failure, _ *http.Request) *apiError { return fromValidation(vf) },
		Domain: func(err error) (*apiError, bool) {
			e := fromDomain(err)
			return e, e != nil
		},
		Echo:            fromEcho,
		UnavailableName: storageapi.ErrorCodeServiceUnavailable,
		InternalName:    storageapi.ErrorCodeInternalError, InternalMessage: "we encountered an internal error; please try again",
		Render: func(c echo.Context, ae *apiError) error { return render(c, ae, logger) },
	}
}

func render(c echo.Context, ae *apiError, logger *slog.Logger) error {
	req := c.Request()
	if ae.Name == storageapi.ErrorCodeNotImplemented {
		// An unimplemented subresource is named only to a caller that proved
		// who it is: any other gets the signature's error.
		if st := stateFrom(req.Context()); st != nil && st.authErr != nil {
			if e := fromDomain(st.authErr); e != nil {
				ae = e
			} else {
				ae = toAPIError(st.authErr)
			}
		}
	}
	resource := ae.Extra
	if resource == "" {
		resource = req.URL.Path
	}
	id := c.Response().Header().Get("X-Cloud-Request-Id")
	if id == "" {
		id = requestID(req.Context())
		c.Response().Header().Set("X-Cloud-Request-Id", id)
	}
	body, err := xml.Marshal(storageapi.Error{Code: ae.Name, Message: ae.Message, Resource: &resource, RequestId: id})
	if err != nil {
		logger.ErrorContext(req.Context(), "storage: marshal error response", "err", err)
		return nil
	}
	return c.Blob(ae.Status, "application/xml", append([]byte(xml.Header), body...))
}

func fromEcho(he *echo.HTTPError) (*apiError, bool) {
	switch he.Code {
	case http.StatusNotFound:
		return notImplemented(), true
	case http.StatusMethodNotAllowed:
		return newError(http.StatusMethodNotAllowed, storageapi.ErrorCodeMethodNotAllowed, "", "the method is not allowed on this resource"), true
	case http.StatusBadRequest:
		return newError(http.StatusBadRequest, storageapi.ErrorCodeInvalidRequest, "", "%v", he.Message), true
	}
	return nil, false
}

// toAPIError is the storage API's answer to err; a caller gone away gets a
// bare 499.
func toAPIError(err error) *apiError {
	if ae, gone := storageErrors(nil).Errors().Answer(err, nil); !gone {
		return ae
	}
	return &apiError{Status: apiserver.StatusClientClosedRequest}
}

// fromDomain maps the errors of the signature check and of the lifecycle
// document, which carry their own codes.
func fromDomain(err error) *apiError {
	var se *sigv4.Error
	if errors.As(err, &se) {
		return &apiError{Status: se.Status, Name: storageapi.ErrorCode(se.Code), Message: se.Message}
	}
	var le *lifecycledoc.Error
	if errors.As(err, &le) {
		return &apiError{Status: le.Status, Name: storageapi.ErrorCode(le.Code), Message: le.Message}
	}
	if errors.Is(err, apiserver.ErrBodyTimeout) {
		return newError(http.StatusRequestTimeout, storageapi.ErrorCodeRequestTimeout, "", "%s", apiserver.BodyTimeoutMessage)
	}
	return nil
}

func notImplemented() *apiError {
	return newError(http.StatusNotImplemented, storageapi.ErrorCodeNotImplemented, "",
		"this service implements only the lifecycle subresource of a bucket: /{bucket}?lifecycle")
}

func fromValidation(vf *validation.Failure) *apiError {
	switch vf.Kind {
	case validation.KindUnauthenticated:
		var ae *apiError
		if errors.As(vf.AuthErr, &ae) {
			return ae // the body's digests, checked as the body is read
		}
		if e := fromDomain(vf.AuthErr); e != nil {
			return e
		}
		if vf.AuthErr != nil {
			// The check itself failed (the key could not be read): the
			// caller is not to blame, and the cause is not theirs to read.
			return toAPIError(vf.AuthErr)
		}
		return newError(http.StatusForbidden, storageapi.ErrorCodeAccessDenied, "", "access denied: %s", vf.Message)
	case validation.KindTooLarge:
		return fromDomain(lifecycledoc.TooLarge())
	case validation.KindTimeout:
		return newError(http.StatusRequestTimeout, storageapi.ErrorCodeRequestTimeout, "", "%s", apiserver.BodyTimeoutMessage)
	case validation.KindNotFound:
		return notImplemented()
	case validation.KindMethodNotAllowed:
		return newError(http.StatusMethodNotAllowed, storageapi.ErrorCodeMethodNotAllowed, "", "%s", vf.Message)
	case validation.KindUnsupportedMediaType:
		if e := fromDomain(vf.Err); e != nil {
			return e // the XML body decoder's verdict
		}
		return newError(http.StatusUnsupportedMediaType, storageapi.ErrorCodeInvalidArgument, "",
			"the body must be a LifecycleConfiguration sent as Content-Type: application/xml")
	}
	if errors.Is(vf.Err, openapi3filter.ErrInvalidRequired) && hasBodyCause(vf) {
		return newError(http.StatusBadRequest, storageapi.ErrorCodeMalformedXML, "",
			"the request body is empty; a LifecycleConfiguration is required")
	}
	return newError(http.StatusBadRequest, storageapi.ErrorCodeInvalidArgument, "", "%s", vf.Message)
}

func hasBodyCause(vf *validation.Failure) bool {
	for _, c := range vf.Causes {
		if c.In == "body" {
			return true
		}
	}
	return false
}
