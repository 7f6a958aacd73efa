package restaurant

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/apistack/apistack/clients"
	"github.com/apistack/apistack/clients/internal/retry"
	"github.com/apistack/apistack/gen/restaurantapi"
)

// ErrorKey is the machine-readable name of an API error (its messageKey).
type ErrorKey string

// The error keys a caller most often tells apart.
const (
	InvalidRequest              ErrorKey = "INVALID_REQUEST"
	InvalidPageToken            ErrorKey = "INVALID_PAGE_TOKEN"
	InvalidLastModified         ErrorKey = "INVALID_LAST_MODIFIED"
	MissingRestaurantExternalID ErrorKey = "MISSING_RESTAURANT_EXTERNAL_ID"
	InvalidRestaurantExternalID ErrorKey = "INVALID_RESTAURANT_EXTERNAL_ID"
	UnknownRestaurant           ErrorKey = "UNKNOWN_RESTAURANT"
	RestaurantNotGranted        ErrorKey = "RESTAURANT_NOT_GRANTED"
	InvalidToken                ErrorKey = "INVALID_TOKEN"
	TokenExpired                ErrorKey = "TOKEN_EXPIRED"
	InvalidCredentials          ErrorKey = "INVALID_CREDENTIALS"
	NotFound                    ErrorKey = "NOT_FOUND"
	RateLimited                 ErrorKey = "RATE_LIMITED"
	InternalError               ErrorKey = "INTERNAL_ERROR"
	AuthenticationRequired      ErrorKey = "AUTHENTICATION_REQUIRED"
	MethodNotAllowed            ErrorKey = "METHOD_NOT_ALLOWED"
	UnsupportedMediaType        ErrorKey = "UNSUPPORTED_MEDIA_TYPE"
	RequestTooLarge             ErrorKey = "REQUEST_TOO_LARGE"
	RequestTimeout              ErrorKey = "REQUEST_TIMEOUT"
	ServiceUnavailable          ErrorKey = "SERVICE_UNAVAILABLE"
)

// Error is an error answer of the API. Use errors.As to read it, or
// errors.Is with &Error{Key: NotFound} to test its key.
type Error struct {
	StatusCode int
	Key        ErrorKey
	Code       int
	Message    string
	// FieldName is the parameter or header at fault, if any.
	FieldName string
	// Details are every fault the answer lists, each with its field.
	Details   []ErrorDetail
	RequestID string
	CanRetry  bool
	// RetryAfter is how long the server asked to wait (429 answers that
	// outlasted the retries).
	RetryAfter time.Duration
}

// ErrorDetail is one fault of an error answer.
type ErrorDetail struct {
	Message string
	// FieldName is the parameter or header at fault, if any.
	FieldName string
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %s", e.StatusCode, e.Key, e.Message)
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request %s)", e.RequestID)
	}
	return b.String()
}

var _ clients.Error = (*Error)(nil)

// HTTPStatus is the answer's status code (clients.Error).
func (e *Error) HTTPStatus() int { return e.StatusCode }

// ErrorCode is the messageKey, such as "NOT_FOUND" (clients.Error).
func (e *Error) ErrorCode() string { return string(e.Key) }

// ErrorMessage is the server's sentence (clients.Error).
func (e *Error) ErrorMessage() string { return e.Message }

// ErrorRequestID is the server's requestId (clients.Error).
func (e *Error) ErrorRequestID() string { return e.RequestID }

// Retryable is the server's canRetry, or true for 429 and 5xx but 501
// (clients.Error).
func (e *Error) Retryable() bool { return e.CanRetry || clients.RetryableStatus(e.StatusCode) }

// Is reports whether target is an *Error with the same Key.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Key == e.Key
}

func parseError(resp *http.Response, body []byte) error {
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	var e restaurantapi.Error
	if err := json.Unmarshal(body, &e); err != nil || e.MessageKey == "" {
		return retry.Wrap(resp, &Error{StatusCode: status, Key: InternalError, Message: fmt.Sprintf("unexpected answer %d: %.200s", status, body)})
	}
	out := &Error{StatusCode: status, Key: ErrorKey(e.MessageKey), Code: e.Code, Message: e.Message, RequestID: e.RequestId, CanRetry: e.CanRetry}
	if e.FieldName != nil {
		out.FieldName = *e.FieldName
	}
	for _, d := range e.Errors {
		detail := ErrorDetail{Message: d.Message}
		if d.FieldName != nil {
			detail.FieldName = *d.FieldName
		}
		out.Details = append(out.Details, detail)
	}
	if resp != nil {
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			out.RetryAfter = time.Duration(secs) * time.Second
		}
	}
	return retry.Wrap(resp, out)
}
