package fax

import (
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

// HTTPStatus is the status e is answered with.
func (e *apiError) HTTPStatus() int { return e.Status }

// errorHandler renders every error as {"errors": [...]}. Anything unexpected
// becomes internal_error without detail (the detail goes to the log).
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	return apiserver.ErrorHandler(apiserver.Errors[*apiError]{
		API: "fax", Logger: logger,
		Failure: fromValidation, Echo: fromEcho, Internal: errInternal, Render: render,
		Unavailable: func() *apiError {
			return newError(http.StatusServiceUnavailable, faxapi.ErrorCodeServiceUnavailable, "%s", apiserver.UnavailableMessage)
		},
	})
}

func render(c echo.Context, ae *apiError) error {
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
	return c.JSON(ae.Status, body)
}

// unboundParameter reads the parameter's name from the generated wrapper's
// refusal of a value it cannot bind.
var unboundParameter = regexp.MustCompile(`^Invalid format for parameter (\S+): `)

func fromEcho(he *echo.HTTPError) (*apiError, bool) {
	msg := fmt.Sprint(he.Message)
	switch he.Code {
	case http.StatusBadRequest:
		ae := newError(http.StatusUnprocessableEntity, faxapi.ErrorCodeInvalidParameter, "%s", msg)
		// The generated wrapper refuses a parameter it cannot bind (a path
		// id that is not a UUID) naming it: source.parameter names it too,
		// as the spec promises for every bad parameter.
		if m := unboundParameter.FindStringSubmatch(msg); m != nil {
			ae.Items[0].Parameter = m[1]
		}
		return ae, true
	case http.StatusNotFound:
		return errNotFoundf("no such resource"), true
	case http.StatusMethodNotAllowed:
		return newError(http.StatusMethodNotAllowed, faxapi.ErrorCodeMethodNotAllowed, "%s", msg), true
	case http.StatusUnsupportedMediaType:
		return newError(http.StatusUnsupportedMediaType, faxapi.ErrorCodeUnsupportedMediaType, "%s", msg), true
	}
	return nil, false
}

// failureAnswers are the fax API's answers to the failures of the spec
// validation (a KindInvalid failure is a 422 listing each cause as an item).
var failureNames = apiserver.FailureNames[faxapi.ErrorCode]{
	Invalid: faxapi.ErrorCodeInvalidParameter, InvalidStatus: http.StatusUnprocessableEntity,
	Unauthenticated: faxapi.ErrorCodeAuthenticationFailed, UnsupportedMediaType: faxapi.ErrorCodeUnsupportedMediaType,
	NotFound: faxapi.ErrorCodeNotFound, MethodNotAllowed: faxapi.ErrorCodeMethodNotAllowed, TooLarge: faxapi.ErrorCodeRequestTooLarge,
	Timeout: faxapi.ErrorCodeRequestTimeout,
}

// missingProperty matches kin-openapi's reasons that name a property at the
// object's level ("property \"to\" is missing"), whose JSON pointer is the
// object's; the property is appended so source.pointer names the field.
var missingProperty = regexp.MustCompile(`^property "([^"]+)" is (missing|unsupported)$`)

func fromValidation(vf *validation.Failure, _ *http.Request) *apiError {
	if inner, ok := apiserver.AuthError[*apiError](vf); ok {
		return inner
	}
	if status, code := failureNames.Of(vf.Kind); status != http.StatusUnprocessableEntity {
		return newError(status, code, "%s", vf.Message)
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
