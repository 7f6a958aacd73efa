package restaurant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// headerRestaurant is the header that selects the restaurant.
const headerRestaurant = "Platform-Restaurant-External-ID"

// apiError is an error the restaurant API answers with.
type apiError struct {
	Status  int
	Key     restaurantapi.ErrorKey
	Message string
	// Field is the parameter or header at fault, if any.
	Field   string
	Details []restaurantapi.ErrorDetail
	// RetryAfter is the Retry-After of a 429, in seconds.
	RetryAfter int
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Key, e.Message) }

func newError(status int, key restaurantapi.ErrorKey, format string, args ...any) *apiError {
	return &apiError{Status: status, Key: key, Message: fmt.Sprintf(format, args...)}
}

func errParam(key restaurantapi.ErrorKey, field, format string, args ...any) *apiError {
	e := newError(http.StatusBadRequest, key, format, args...)
	e.Field = field
	e.Details = []restaurantapi.ErrorDetail{{Message: e.Message, FieldName: &e.Field}}
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
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		ae := toAPIError(err, c.Request())
		if ae.Status == apiserver.StatusClientClosedRequest {
			c.Response().WriteHeader(ae.Status)
			return
		}
		if ae.Status == http.StatusInternalServerError {
			logger.ErrorContext(c.Request().Context(), "internal error", "path", c.Request().URL.Path, "err", err)
		}
		details := ae.Details
		if details == nil {
			details = []restaurantapi.ErrorDetail{}
		}
		var field *string
		if ae.Field != "" {
			field = &ae.Field
		}
		body := restaurantapi.Error{
			Status: ae.Status, Code: errorCodes[ae.Key], Message: ae.Message, MessageKey: ae.Key,
			FieldName: field, RequestId: requestIDFrom(c.Request().Context()),
			CanRetry: ae.Status == http.StatusTooManyRequests || ae.Status >= 500,
			Errors:   details,
		}
		if ae.Status == http.StatusTooManyRequests {
			c.Response().Header().Set("Retry-After", strconv.Itoa(max(ae.RetryAfter, 1)))
		}
		if ae.Status == http.StatusServiceUnavailable {
			c.Response().Header().Set("Retry-After", apiserver.RetryAfterUnavailable)
		}
		if err := c.JSON(ae.Status, body); err != nil {
			logger.WarnContext(c.Request().Context(), "write error response", "err", err)
		}
	}
}

func toAPIError(err error, r *http.Request) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var vf *validation.Failure
	if errors.As(err, &vf) {
		return fromValidation(vf, r)
	}
	if errors.Is(err, context.Canceled) {
		return newError(apiserver.StatusClientClosedRequest, restaurantapi.ErrorKeyINTERNALERROR, "the client closed the connection")
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := fmt.Sprint(he.Message)
		switch he.Code {
		case http.StatusBadRequest:
			return newError(http.StatusBadRequest, restaurantapi.ErrorKeyINVALIDREQUEST, "%s", msg)
		case http.StatusNotFound:
			return newError(http.StatusNotFound, restaurantapi.ErrorKeyNOTFOUND, "no such resource")
		case http.StatusMethodNotAllowed:
			return newError(http.StatusMethodNotAllowed, restaurantapi.ErrorKeyMETHODNOTALLOWED, "method not allowed")
		}
	}
	if apiserver.Unavailable(err) {
		return newError(http.StatusServiceUnavailable, restaurantapi.ErrorKeySERVICEUNAVAILABLE, "%s", apiserver.UnavailableMessage)
	}
	return newError(http.StatusInternalServerError, restaurantapi.ErrorKeyINTERNALERROR, "an unexpected error occurred; retry later")
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
	ae := &apiError{Status: http.StatusBadRequest, Key: restaurantapi.ErrorKeyINVALIDREQUEST, Message: vf.Message, Details: details}
	switch vf.Kind {
	case validation.KindUnauthenticated:
		var inner *apiError
		if errors.As(vf.AuthErr, &inner) {
			return inner
		}
		ae.Status, ae.Key = http.StatusUnauthorized, restaurantapi.ErrorKeyAUTHENTICATIONREQUIRED
	case validation.KindUnsupportedMediaType:
		ae.Status, ae.Key = http.StatusUnsupportedMediaType, restaurantapi.ErrorKeyUNSUPPORTEDMEDIATYPE
	case validation.KindNotFound:
		ae.Status, ae.Key = http.StatusNotFound, restaurantapi.ErrorKeyNOTFOUND
	case validation.KindMethodNotAllowed:
		ae.Status, ae.Key = http.StatusMethodNotAllowed, restaurantapi.ErrorKeyMETHODNOTALLOWED
	case validation.KindTooLarge:
		ae.Status, ae.Key = http.StatusRequestEntityTooLarge, restaurantapi.ErrorKeyREQUESTTOOLARGE
	case validation.KindTimeout:
		ae.Status, ae.Key = http.StatusRequestTimeout, restaurantapi.ErrorKeyREQUESTTIMEOUT
	default:
		for _, c := range vf.Causes {
			switch {
			case c.In == "header" && http.CanonicalHeaderKey(c.Name) == http.CanonicalHeaderKey(headerRestaurant):
				ae.Field = headerRestaurant
				if r.Header.Get(headerRestaurant) == "" {
					ae.Key = restaurantapi.ErrorKeyMISSINGRESTAURANTEXTERNALID
					ae.Message = "the Platform-Restaurant-External-ID header is required: set it to the GUID of the restaurant"
				} else {
					ae.Key = restaurantapi.ErrorKeyINVALIDRESTAURANTEXTERNALID
					ae.Message = "the Platform-Restaurant-External-ID header must be a restaurant GUID"
				}
				return ae
			case c.In == "query" && c.Name == "lastModified":
				ae.Key, ae.Field = restaurantapi.ErrorKeyINVALIDLASTMODIFIED, c.Name
				ae.Message = "lastModified must be an instant such as 2015-12-01T00:00:00.000+0000"
				return ae
			}
		}
		if len(vf.Causes) > 0 {
			ae.Field = vf.Causes[0].Name
		}
	}
	return ae
}
