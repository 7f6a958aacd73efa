package clients

import (
	"fmt"
	"time"
)

// Error is what every error answer of every client implements (*pam.Error,
// *fax.Error, *storage.Error, *restaurant.Error), so a caller can handle the
// four APIs alike:
//
//	var apiErr clients.Error
//	if errors.As(err, &apiErr) && apiErr.HTTPStatus() == http.StatusNotFound { … }
//
// Each client's own error type carries more (PAM's causes, the fax API's
// error list, S3's resource), reachable with errors.As on that type.
type Error interface {
	error
	// HTTPStatus is the answer's HTTP status code.
	HTTPStatus() int
	// ErrorCode is the API's machine-readable error code or name
	// ("resource_does_not_exist", "NoSuchBucket", "10007", …).
	ErrorCode() string
	// ErrorMessage is the server's human sentence, without any prefix.
	ErrorMessage() string
	// ErrorRequestID identifies the request in the server's logs, where the API
	// gives one (storage, restaurant); "" otherwise.
	ErrorRequestID() string
	// Retryable says whether the same request may succeed later unchanged
	// (429, 500, 502, 503, 504, or the API says so).
	Retryable() bool
}

// RetryPolicy is how a client retries, the same for the four clients. The
// zero value is the default of every field.
//
// A call is bounded by its context: the retries, the waits between them and
// every attempt happen before the context's deadline, or not at all. The
// client never waits past that deadline: when the next attempt could only
// start after it, the call ends at once with a *RetryError holding the last
// answer.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt (default 8;
	// negative: none). Only retryable failures are retried: connection errors,
	// an attempt that timed out, 429, 500, 502, 503, 504.
	MaxRetries int
	// AttemptTimeout bounds one attempt, from sending the request to closing
	// the answer's body (default 30s; negative: no bound but the context's).
	// An attempt that times out is retried like a connection error.
	AttemptTimeout time.Duration
	// MaxWait is the longest wait the client honours when the server says
	// when to come back (Retry-After on 429 and 503, X-RateLimit-Retry-At
	// then X-RateLimit-Reset on 429), default 60s. A server asking for a
	// longer wait ends the call at once with a *RetryError holding the
	// answer, rather than a call that blocks for minutes.
	MaxWait time.Duration
	// WaitMin and WaitMax bound the exponential backoff (with full jitter)
	// used when the server does not say when to come back (defaults 100ms
	// and 10s).
	WaitMin, WaitMax time.Duration
}

// RetryError is the error of a call whose retries ended without success: the
// retries ran out, the server asked for a wait longer than
// RetryPolicy.MaxWait, or the context's deadline comes before the next
// attempt could start. Err is the last answer's error (the client's own
// error type, a clients.Error) or the last connection error; errors.As
// reaches both.
type RetryError struct {
	// Attempts is the number of requests sent.
	Attempts int
	// Reason says why the retries stopped.
	Reason RetryStop
	// Wait is the wait the server asked for or the backoff chose before the
	// attempt that was not made (zero when the retries ran out).
	Wait time.Duration
	// Err is the last attempt's error.
	Err error
}

// RetryStop says why a RetryError's retries stopped.
type RetryStop string

// The reasons retries stop.
const (
	// RetriesExhausted: MaxRetries retries were made.
	RetriesExhausted RetryStop = "retries exhausted"
	// WaitTooLong: the server asked for a wait longer than MaxWait.
	WaitTooLong RetryStop = "the server asked for a wait longer than MaxWait"
	// DeadlineTooSoon: the context's deadline comes before the next attempt.
	DeadlineTooSoon RetryStop = "the context's deadline comes before the next attempt"
)

// Error implements error.
func (e *RetryError) Error() string {
	switch e.Reason {
	case RetriesExhausted:
		return fmt.Sprintf("%v (gave up after %d attempts: %s)", e.Err, e.Attempts, e.Reason)
	default:
		return fmt.Sprintf("%v (gave up after %d attempts: %s, wait %s)", e.Err, e.Attempts, e.Reason, e.Wait)
	}
}

// Unwrap returns the last attempt's error.
func (e *RetryError) Unwrap() error { return e.Err }

// RetryableStatus reports whether an answer with this status may succeed
// later unchanged: 429 and every 5xx but 501 Not Implemented.
func RetryableStatus(status int) bool {
	return status == 429 || (status >= 500 && status <= 599 && status != 501)
}
