package fax

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// apiErrorItem is one entry of the errors array.
type apiErrorItem struct {
	Code      faxapi.ErrorCode
	Detail    string
	Pointer   string
	Parameter string
}

// apiError is an error the fax API answers with: a status and one or more
// items.
type apiError struct {
	Status int
	Items  []apiErrorItem
}

func (e *apiError) Error() string {
	parts := make([]string, 0, len(e.Items))
	for _, it := range e.Items {
		parts = append(parts, string(it.Code)+": "+it.Detail)
	}
	return fmt.Sprintf("%d %s", e.Status, strings.Join(parts, "; "))
}

func newError(status int, code faxapi.ErrorCode, format string, args ...any) *apiError {
	return &apiError{Status: status, Items: []apiErrorItem{{Code: code, Detail: fmt.Sprintf(format, args...)}}}
}

func invalidField(pointer, detail string) apiErrorItem {
	return apiErrorItem{Code: faxapi.ErrorCodeInvalidParameter, Detail: detail, Pointer: pointer}
}

func errAuthentication(format string, args ...any) *apiError {
	return newError(http.StatusUnauthorized, faxapi.ErrorCodeAuthenticationFailed, format, args...)
}

func errForbidden(format string, args ...any) *apiError {
	return newError(http.StatusForbidden, faxapi.ErrorCodeForbidden, format, args...)
}

func errNotFoundf(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, faxapi.ErrorCodeNotFound, format, args...)
}

func errInvalidState(format string, args ...any) *apiError {
	return newError(http.StatusUnprocessableEntity, faxapi.ErrorCodeInvalidState, format, args...)
}

func errInternal() *apiError {
	return newError(http.StatusInternalServerError, faxapi.ErrorCodeInternalError, "an unexpected error occurred; retry later")
}

// titles are the short summaries of each code.
var titles = map[faxapi.ErrorCode]string{
	faxapi.ErrorCodeAuthenticationFailed: "Authentication failed",
	faxapi.ErrorCodeForbidden:            "Forbidden",
	faxapi.ErrorCodeNotFound:             "Not Found",
	faxapi.ErrorCodeInvalidParameter:     "Invalid Parameters",
	faxapi.ErrorCodeInvalidState:         "Invalid State",
	faxapi.ErrorCodeRequestTooLarge:      "Request Too Large",
	faxapi.ErrorCodeUnsupportedMediaType: "Unsupported Media Type",
	faxapi.ErrorCodeMethodNotAllowed:     "Method Not Allowed",
	faxapi.ErrorCodeInternalError:        "Internal Error",
	faxapi.ErrorCodeRequestTimeout:       "Request Timeout",
	faxapi.ErrorCodeServiceUnavailable:   "Service Unavailable",
}

// errorHandler renders every error as {"errors": [...]}. Anything unexpected
// becomes internal_error without detail (the detail goes to the log).
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		ae := toAPIError(err)
		if ae.Status == http.StatusInternalServerError {
			logger.ErrorContext(c.Request().Context(), "internal error", "path", c.Request().URL.Path, "err", err)
		}
		if ae.Status == apiserver.StatusClientClosedRequest {
			c.Response().WriteHeader(ae.Status)
			return
		}
		if ae.Status == http.StatusServiceUnavailable {
			c.Response().Header().Set("Retry-After", apiserver.RetryAfterUnavailable)
		}
		body := faxapi.Errors{Errors: make([]faxapi.Error, 0, len(ae.Items))}
		for _, it := range ae.Items {
			e := faxapi.Error{Code: it.Code, Title: titles[it.Code], Detail: it.Detail}
			if it.Pointer != "" || it.Parameter != "" {
				e.Source = &faxapi.ErrorSource{}
				if it.Pointer != "" {
					p := it.Pointer
					e.Source.Pointer = &p
				}
				if it.Parameter != "" {
					p := it.Parameter
					e.Source.Parameter = &p
				}
			}
			body.Errors = append(body.Errors, e)
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
	var vf *validation.Failure
	if errors.As(err, &vf) {
		return fromValidation(vf)
	}
	if errors.Is(err, context.Canceled) {
		return newError(apiserver.StatusClientClosedRequest, faxapi.ErrorCodeInternalError, "the client closed the connection")
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := fmt.Sprint(he.Message)
		switch he.Code {
		case http.StatusBadRequest:
			return newError(http.StatusUnprocessableEntity, faxapi.ErrorCodeInvalidParameter, "%s", msg)
		case http.StatusNotFound:
			return errNotFoundf("no such resource")
		case http.StatusMethodNotAllowed:
			return newError(http.StatusMethodNotAllowed, faxapi.ErrorCodeMethodNotAllowed, "%s", msg)
		case http.StatusUnsupportedMediaType:
			return newError(http.StatusUnsupportedMediaType, faxapi.ErrorCodeUnsupportedMediaType, "%s", msg)
		}
	}
	if apiserver.Unavailable(err) {
		return newError(http.StatusServiceUnavailable, faxapi.ErrorCodeServiceUnavailable, "%s", apiserver.UnavailableMessage)
	}
	return errInternal()
}

// missingProperty matches kin-openapi's reasons that name a property at the
// object's level ("property \"to\" is missing"), whose JSON pointer is the
// object's; the property is appended so source.pointer names the field.
var missingProperty = regexp.MustCompile(`^property "([^"]+)" is (missing|unsupported)$`)

func fromValidation(vf *validation.Failure) *apiError {
	switch vf.Kind {
	case validation.KindUnauthenticated:
		var inner *apiError
		if errors.As(vf.AuthErr, &inner) {
			return inner
		}
		return errAuthentication("%s", vf.Message)
	case validation.KindUnsupportedMediaType:
		return newError(http.StatusUnsupportedMediaType, faxapi.ErrorCodeUnsupportedMediaType, "%s", vf.Message)
	case validation.KindNotFound:
		return errNotFoundf("%s", vf.Message)
	case validation.KindMethodNotAllowed:
		return newError(http.StatusMethodNotAllowed, faxapi.ErrorCodeMethodNotAllowed, "%s", vf.Message)
	case validation.KindTooLarge:
		return newError(http.StatusRequestEntityTooLarge, faxapi.ErrorCodeRequestTooLarge, "%s", vf.Message)
	case validation.KindTimeout:
		return newError(http.StatusRequestTimeout, faxapi.ErrorCodeRequestTimeout, "%s", vf.Message)
	}
	ae := &apiError{Status: http.StatusUnprocessableEntity}
	for _, c := range vf.Causes {
		it := apiErrorItem{Code: faxapi.ErrorCodeInvalidParameter, Detail: c.Message}
		switch c.In {
		case "body":
			it.Pointer = c.Name
			if m := missingProperty.FindStringSubmatch(c.Message); m != nil && !strings.HasSuffix(c.Name, "/"+m[1]) {
				it.Pointer = strings.TrimSuffix(c.Name, "/") + "/" + m[1]
			}
			if it.Pointer == "" {
				it.Pointer = "/"
			}
			it.Detail = strings.TrimPrefix(it.Pointer, "/") + ": " + c.Message
		default:
			it.Parameter = c.Name
			it.Detail = c.Name + ": " + c.Message
		}
		ae.Items = append(ae.Items, it)
	}
	if len(ae.Items) == 0 {
		ae.Items = []apiErrorItem{{Code: faxapi.ErrorCodeInvalidParameter, Detail: vf.Message}}
	}
	return ae
}
