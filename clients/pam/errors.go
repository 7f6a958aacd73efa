package pam

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/apistack/apistack/clients"
	"github.com/apistack/apistack/clients/internal/retry"
	"github.com/apistack/apistack/gen/pamapi"
)

// ErrorName is one of the PAM API's error names.
type ErrorName string

// The PAM API's error names (the "error" field of an error answer).
const (
	InvalidRequest             ErrorName = "invalid_request"
	AuthenticationError        ErrorName = "authentication_error"
	AuthorizationError         ErrorName = "authorization_error"
	ServerAuthorizationRevoked ErrorName = "server_authorization_revoked"
	ForbiddenError             ErrorName = "forbidden_error"
	QuotaExceeded              ErrorName = "quota_exceeded"
	DisabledTeam               ErrorName = "disabled_team"
	ResourceDoesNotExist       ErrorName = "resource_does_not_exist"
	ResourceDeprecated         ErrorName = "resource_deprecated"
	ResourceAlreadyExists      ErrorName = "resource_already_exists"
	UnsupportedContentType     ErrorName = "unsupported_content_type"
	TooManyRequests            ErrorName = "too_many_requests"
	ClientClosedConnection     ErrorName = "client_closed_connection"
	UnknownError               ErrorName = "unknown_error"
	ServiceOffline             ErrorName = "service_offline"
	GatewayTimeout             ErrorName = "gateway_timeout"
)

// Cause is one reason the server gave for an error.
type Cause struct {
	// Error says what is wrong at Location.
	Error string `json:"error"`
	// Location is the parameter name, or a JSON pointer into the body.
	Location string `json:"location"`
	// LocationType says what Location names (LocationBody, LocationQuery).
	LocationType LocationType `json:"location_type"`
}

// LocationType is the kind of request part a Cause's Location names.
type LocationType string

// The kinds of request part a cause is about.
const (
	LocationBody   LocationType = "body"
	LocationQuery  LocationType = "query"
	LocationPath   LocationType = "path"
	LocationHeader LocationType = "header"
)

// Error is an error answer of the PAM API. Use errors.As to get it from any
// error a method returns.
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Name is the error name, e.g. ForbiddenError.
	Name ErrorName
	// Message is the server's sentence.
	Message string
	// Causes lists what was wrong where (for invalid_request).
	Causes []Cause
}

var _ clients.Error = (*Error)(nil)

// Error implements error. It carries no "pam:" prefix: the method that
// returns it says the prefix once ("pam: get group: 404 …").
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %s", e.StatusCode, e.Name, e.Message)
	for _, c := range e.Causes {
		fmt.Fprintf(&b, "; %s %s: %s", c.LocationType, c.Location, c.Error)
	}
	return b.String()
}

// HTTPStatus is the answer's status code (clients.Error).
func (e *Error) HTTPStatus() int { return e.StatusCode }

// ErrorCode is the error name, such as "resource_does_not_exist" (clients.Error).
func (e *Error) ErrorCode() string { return string(e.Name) }

// ErrorMessage is the server's sentence (clients.Error).
func (e *Error) ErrorMessage() string { return e.Message }

// ErrorRequestID is "": the PAM API gives no request id (clients.Error).
func (e *Error) ErrorRequestID() string { return "" }

// Retryable is true for 429 and 5xx answers but 501 (clients.Error).
func (e *Error) Retryable() bool { return clients.RetryableStatus(e.StatusCode) }

// Is matches another *Error by name, so errors.Is(err, &pam.Error{Name:
// pam.ForbiddenError}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Name == e.Name
}

// parseError turns an error answer into an *Error; a body that is not the
// PAM error shape still yields one, named after the status.
func parseError(resp *http.Response, body []byte) error {
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	var e pamapi.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		return retry.Wrap(resp, &Error{StatusCode: status, Name: UnknownError, Message: fmt.Sprintf("unexpected answer %d: %.200s", status, body)})
	}
	return retry.Wrap(resp, &Error{StatusCode: status, Name: ErrorName(e.Error), Message: e.Message, Causes: causes(e.ErrorCause)})
}

// causes converts the generated causes of an error answer.
func causes(in []pamapi.ErrorCause) []Cause {
	if in == nil {
		return nil
	}
	out := make([]Cause, len(in))
	for i, c := range in {
		out[i] = Cause{Error: c.Error, Location: c.Location, LocationType: LocationType(c.LocationType)}
	}
	return out
}
