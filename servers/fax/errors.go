package fax

import (
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/internal/apierror"
	"github.com/apistack/apistack/servers/internal/validation"
)

// apiErrorItem is one entry of the errors array.
type apiErrorItem struct {
	Code      faxapi.ErrorCode
	Detail    string
	Pointer   string
	Parameter string
}

// apiError is an error the fax API answers with. Most have one item, which
// Name and Message make; a 422 built from a request's problems (invalid)
// lists every item, with its source, in Extra, and its first item's code and
// detail in Name and Message.
type apiError = apierror.Error[faxapi.ErrorCode, []apiErrorItem]

func newError(status int, code faxapi.ErrorCode, format string, args ...any) *apiError {
	return apierror.New[faxapi.ErrorCode, []apiErrorItem](status, code, format, args...)
}

// invalid is the 422 listing each problem of a request as an item.
func invalid(items ...apiErrorItem) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Name: items[0].Code, Message: items[0].Detail, Extra: items}
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

// errCodeTooManyRequests is the code of a 429, whose body the spec
// declares apart (TooManyRequestsErrors), so that the codes of every other
// answer stay as they were.
const errCodeTooManyRequests = faxapi.ErrorCode(faxapi.TooManyRequestsErrorsErrorsCodeTooManyRequests)

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
	errCodeTooManyRequests:               "Too Many Requests",
}

// faxErrors is the fax API's side of the shared error handler: every error
// is rendered as {"errors": [...]}, and anything unexpected becomes
// internal_error without detail (the detail goes to the log).
var faxErrors = apierror.API[faxapi.ErrorCode, []apiErrorItem]{
	Name:            "fax",
	FailureNames:    failureNames,
	UnavailableName: faxapi.ErrorCodeServiceUnavailable,
	InternalName:    faxapi.ErrorCodeInternalError, InternalMessage: "an unexpected error occurred; retry later",
	Failure: fromValidation, Echo: fromEcho, Render: render,
}

// errorHandler renders every error in the fax API's body (see faxErrors).
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	api := faxErrors
	api.Logger = logger
	return api.Handler()
}

func render(c echo.Context, ae *apiError) error {
	items := ae.Extra
	if len(items) == 0 {
		items = []apiErrorItem{{Code: ae.Name, Detail: ae.Message}}
	}
	body := faxapi.Errors{Errors: make([]faxapi.Error, 0, len(items))}
	for _, it := range items {
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
		// The generated wrapper refuses a parameter it cannot bind (a path
		// id that is not a UUID) naming it: source.parameter names it too,
		// as the spec promises for every bad parameter.
		if m := unboundParameter.FindStringSubmatch(msg); m != nil {
			return invalid(apiErrorItem{Code: faxapi.ErrorCodeInvalidParameter, Detail: msg, Parameter: m[1]}), true
		}
		return newError(http.StatusUnprocessableEntity, faxapi.ErrorCodeInvalidParameter, "%s", msg), true
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
var failureNames = apierror.FailureNames[faxapi.ErrorCode]{
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
	if inner, ok := apierror.AuthError[*apiError](vf); ok {
		return inner
	}
	if status, code := failureNames.Of(vf.Kind); status != http.StatusUnprocessableEntity {
		return newError(status, code, "%s", vf.Message)
	}
	var items []apiErrorItem
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
		items = append(items, it)
	}
	if len(items) == 0 {
		items = []apiErrorItem{{Code: faxapi.ErrorCodeInvalidParameter, Detail: vf.Message}}
	}
	return invalid(items...)
}
