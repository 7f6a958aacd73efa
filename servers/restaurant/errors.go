package restaurant

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/servers/internal/apierror"
	"github.com/apistack/apistack/servers/internal/validation"
)

// headerRestaurant is the header that selects the restaurant.
const headerRestaurant = "Platform-Restaurant-External-ID"

// apiError is an error the restaurant API answers with; its Name is the
// body's messageKey.
type apiError = apierror.Error[restaurantapi.ErrorKey, errorExtra]

// errorExtra is what the restaurant API's error body carries besides the
// key and the message.
type errorExtra struct {
	// Field is the parameter or header at fault, if any.
	Field   string
	Details []restaurantapi.ErrorDetail
	// RetryAfter is the Retry-After of a 429, in seconds.
	RetryAfter int
}

func newError(status int, key restaurantapi.ErrorKey, format string, args ...any) *apiError {
	return apierror.New[restaurantapi.ErrorKey, errorExtra](status, key, format, args...)
}

func errParam(key restaurantapi.ErrorKey, field, format string, args ...any) *apiError {
	e := newError(http.StatusBadRequest, key, format, args...)
	e.Extra.Field = field
	e.Extra.Details = []restaurantapi.ErrorDetail{{Message: e.Message, FieldName: &e.Extra.Field}}
	return e
}

// errorCodes gives every message key its stable number.
var errorCodes = map[restaurantapi.ErrorKey]int{
	restaurantapi.ErrorKeyINVALIDREQUEST:              10000,
	restaurantapi.ErrorKeyINVALIDPAGETOKEN:            10001,
	restaurantapi.ErrorKeyINVALIDLASTMODIFIED:         10002,
	restaurantapi.ErrorKeyMISSINGRESTAURANTEXTERNALID: 10003,
	restaurantapi.ErrorKeyINVALIDRESTAURANTEXTERNALID: 10004,
	restaurantapi.ErrorKeyUNKNOWNRESTAURANT:           10005,
	restaurantapi.ErrorKeyRESTAURANTNOTGRANTED:        10006,
	restaurantapi.ErrorKeyAUTHENTICATIONREQUIRED:      10010,
	restaurantapi.ErrorKeyINVALIDTOKEN:                10011,
	restaurantapi.ErrorKeyTOKENEXPIRED:                10012,
	restaurantapi.ErrorKeyINVALIDCREDENTIALS:          10013,
	restaurantapi.ErrorKeyNOTFOUND:                    10020,
	restaurantapi.ErrorKeyMETHODNOTALLOWED:            10021,
	restaurantapi.ErrorKeyUNSUPPORTEDMEDIATYPE:        10022,
	restaurantapi.ErrorKeyREQUESTTOOLARGE:             10023,
	restaurantapi.ErrorKeyREQUESTTIMEOUT:              10024,
	restaurantapi.ErrorKeyRATELIMITED:                 10029,
	restaurantapi.ErrorKeyINTERNALERROR:               10050,
	restaurantapi.ErrorKeySERVICEUNAVAILABLE:          10053,
}

// errorHandler renders every error in the restaurant API's body. Anything
// unexpected becomes INTERNAL_ERROR without detail (the detail goes to the
// log, never to the caller).
func errorHandler(logger *slog.Logger) echo.HTTPErrorHandler {
	return apierror.API[restaurantapi.ErrorKey, errorExtra]{
		Name: "restaurant", Logger: logger,
		FailureNames:    failureNames,
		UnavailableName: restaurantapi.ErrorKeySERVICEUNAVAILABLE,
		InternalName:    restaurantapi.ErrorKeyINTERNALERROR, InternalMessage: "an unexpected error occurred; retry later",
		Failure: fromValidation, Echo: fromEcho, Render: render,
	}.Handler()
}

// retryable reports whether the same request may succeed later: a body
// that did not arrive in time (sent again, in time), a rate limit, a server
// error.
func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

func render(c echo.Context, ae *apiError) error {
	details := ae.Extra.Details
	if details == nil {
		details = []restaurantapi.ErrorDetail{}
	}
	var field *string
	if ae.Extra.Field != "" {
		field = &ae.Extra.Field
	}
	body := restaurantapi.Error{
		Status: ae.Status, Code: errorCodes[ae.Name], Message: ae.Message, MessageKey: ae.Name,
		FieldName: field, RequestId: requestIDFrom(c.Request().Context()),
		CanRetry: retryable(ae.Status),
		Errors:   details,
	}
	if ae.Status == http.StatusTooManyRequests {
		c.Response().Header().Set("Retry-After", strconv.Itoa(max(ae.Extra.RetryAfter, 1)))
	}
	return c.JSON(ae.Status, body)
}

func fromEcho(he *echo.HTTPError) (*apiError, bool) {
	switch he.Code {
	case http.StatusBadRequest:
		return newError(http.StatusBadRequest, restaurantapi.ErrorKeyINVALIDREQUEST, "%s", fmt.Sprint(he.Message)), true
	case http.StatusNotFound:
		return newError(http.StatusNotFound, restaurantapi.ErrorKeyNOTFOUND, "no such resource"), true
	case http.StatusMethodNotAllowed:
		return newError(http.StatusMethodNotAllowed, restaurantapi.ErrorKeyMETHODNOTALLOWED, "method not allowed"), true
	}
	return nil, false
}

// failureAnswers are the restaurant API's answers to the failures of the
// spec validation.
var failureNames = apierror.FailureNames[restaurantapi.ErrorKey]{
	Invalid: restaurantapi.ErrorKeyINVALIDREQUEST, Unauthenticated: restaurantapi.ErrorKeyAUTHENTICATIONREQUIRED,
	UnsupportedMediaType: restaurantapi.ErrorKeyUNSUPPORTEDMEDIATYPE, NotFound: restaurantapi.ErrorKeyNOTFOUND,
	MethodNotAllowed: restaurantapi.ErrorKeyMETHODNOTALLOWED, TooLarge: restaurantapi.ErrorKeyREQUESTTOOLARGE,
	Timeout: restaurantapi.ErrorKeyREQUESTTIMEOUT,
}

// fromValidation maps a refused request onto the API's errors. The restaurant
// header and lastModified get their own keys, so a caller can tell them apart
// from any other bad parameter.
func fromValidation(vf *validation.Failure, r *http.Request) *apiError {
	details := make([]restaurantapi.ErrorDetail, 0, len(vf.Causes))
	for _, c := range vf.Causes {
		name := c.Name
		details = append(details, restaurantapi.ErrorDetail{Message: c.Message, FieldName: &name})
	}
	if inner, ok := apierror.AuthError[*apiError](vf); ok {
		return inner
	}
	status, key := failureNames.Of(vf.Kind)
	ae := &apiError{Status: status, Name: key, Message: vf.Message, Extra: errorExtra{Details: details}}
	if status == http.StatusBadRequest {
		for _, c := range vf.Causes {
			switch {
			case c.In == "header" && http.CanonicalHeaderKey(c.Name) == http.CanonicalHeaderKey(headerRestaurant):
				ae.Extra.Field = headerRestaurant
				if r.Header.Get(headerRestaurant) == "" {
					ae.Name = restaurantapi.ErrorKeyMISSINGRESTAURANTEXTERNALID
					ae.Message = "the Platform-Restaurant-External-ID header is required: set it to the GUID of the restaurant"
				} else {
					ae.Name = restaurantapi.ErrorKeyINVALIDRESTAURANTEXTERNALID
					ae.Message = "the Platform-Restaurant-External-ID header must be a restaurant GUID"
				}
				return ae
			case c.In == "query" && c.Name == "lastModified":
				ae.Name, ae.Extra.Field = restaurantapi.ErrorKeyINVALIDLASTMODIFIED, c.Name
				ae.Message = "lastModified must be an instant such as 2015-12-01T00:00:00.000+0000"
				return ae
			}
		}
		if len(vf.Causes) > 0 {
			ae.Extra.Field = vf.Causes[0].Name
		}
	}
	return ae
}
