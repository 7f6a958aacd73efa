package storage

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/clients/storage/sigv4"
	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
	"github.com/apistack/apistack/servers/storage/lifecycledoc"
)

// apiError is an error the storage API answers with: a status, an
// object-storage code, the resource and a sentence for the caller.
type apiError struct {
	Status   int
	Code     storageapi.ErrorCode
	Resource string
	Message  string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func newError(status int, code storageapi.ErrorCode, resource, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Resource: resource, Message: fmt.Sprintf(format, args...)}
}

// errorHandler renders every error as an object-storage <Error> document.
// Anything unexpected becomes InternalError without detail (the detail goes to
// the log, never to the caller).
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	req := c.Request()
	ae := toAPIError(err)
	if ae.Status == apiserver.StatusClientClosedRequest {
		c.Response().WriteHeader(ae.Status)
		return
	}
	if ae.Status == http.StatusInternalServerError {
		s.logger.ErrorContext(req.Context(), "storage: internal error", "path", req.URL.Path, "err", err)
	}
	if ae.Resource == "" {
		ae.Resource = req.URL.Path
	}
	id := c.Response().Header().Get("X-Cloud-Request-Id")
	if id == "" {
		id = requestID(req.Context())
		c.Response().Header().Set("X-Cloud-Request-Id", id)
	}
	body, merr := xml.Marshal(storageapi.Error{Code: ae.Code, Message: ae.Message, Resource: &ae.Resource, RequestId: id})
	if merr != nil {
		s.logger.ErrorContext(req.Context(), "storage: marshal error response", "err", merr)
		return
	}
	if err := c.Blob(ae.Status, "application/xml", append([]byte(xml.Header), body...)); err != nil {
		s.logger.WarnContext(req.Context(), "storage: write error response", "err", err)
	}
}

func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var vf *validation.Failure
	if errors.As(err, &vf) {
		return fromValidation(vf)
	}
	if e := fromDomain(err); e != nil {
		return e
	}
	if errors.Is(err, context.Canceled) {
		return &apiError{Status: apiserver.StatusClientClosedRequest}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return notImplemented()
		case http.StatusMethodNotAllowed:
			return newError(http.StatusMethodNotAllowed, storageapi.ErrorCodeMethodNotAllowed, "", "the method is not allowed on this resource")
		case http.StatusBadRequest:
			return newError(http.StatusBadRequest, storageapi.ErrorCodeInvalidRequest, "", "%v", he.Message)
		}
	}
	return newError(http.StatusInternalServerError, storageapi.ErrorCodeInternalError, "", "we encountered an internal error; please try again")
}

// fromDomain maps the errors of the signature check and of the lifecycle
// document, which carry their own codes.
func fromDomain(err error) *apiError {
	var se *sigv4.Error
	if errors.As(err, &se) {
		return &apiError{Status: se.Status, Code: storageapi.ErrorCode(se.Code), Message: se.Message}
	}
	var le *lifecycledoc.Error
	if errors.As(err, &le) {
		return &apiError{Status: le.Status, Code: storageapi.ErrorCode(le.Code), Message: le.Message}
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
