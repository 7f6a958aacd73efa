// Package retry is the one retry construction the four clients share, on
// hashicorp/go-retryablehttp. It retries connection failures, attempts that
// timed out, 429 and 5xx answers (501 excepted); waits as long as the server
// asks (Retry-After on 429 and 503; X-RateLimit-Retry-At, then
// X-RateLimit-Reset, on 429) plus a small random jitter, up to
// clients.RetryPolicy.MaxWait; otherwise backs off exponentially with full
// jitter. Each attempt has its own timeout (AttemptTimeout), distinct from the
// call's bound, which is the request's context: no wait outlives it, and a
// wait that would end after the context's deadline is not started.
//
// retryablehttp runs the loop; the decision and the wait happen in its
// CheckRetry hook (which sees the request's context), so the wait is on an
// injectable clock and tests need no sleeps. When the retries stop without
// success the last answer is handed back as it is (so the client decodes its
// error body) and Outcome reports why; a last connection error comes back as
// a *clients.RetryError.
package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/apistack/apistack/clients"
)

// Defaults of clients.RetryPolicy.
const (
	DefaultMaxRetries     = 8
	DefaultAttemptTimeout = 30 * time.Second
	DefaultMaxWait        = 60 * time.Second
	DefaultWaitMin        = 100 * time.Millisecond
	DefaultWaitMax        = 10 * time.Second
	// jitter is the largest random delay added to a server-given wait, so
	// callers told the same instant do not all come back at once.
	jitter = 250 * time.Millisecond
)

// Clock is the time the waits are computed and spent on.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, whichever is first, and returns
	// ctx.Err() in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Options are a RetryPolicy with its defaults applied, plus the test hooks.
type Options struct {
	clients.RetryPolicy
	// Clock defaults to the wall clock.
	Clock Clock
	// Jitter is the largest random delay added to a server-given wait
	// (default 250ms; negative: none).
	Jitter time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.AttemptTimeout == 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.WaitMin == 0 {
		o.WaitMin = DefaultWaitMin
	}
	if o.WaitMax == 0 {
		o.WaitMax = DefaultWaitMax
	}
	if o.WaitMax < o.WaitMin {
		o.WaitMax = o.WaitMin
	}
	if o.Jitter == 0 {
		o.Jitter = jitter
	}
	if o.Jitter < 0 {
		o.Jitter = 0
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	return o
}

// HTTPClient returns the http.Client a client sends its calls with: next
// (http.DefaultTransport when nil) behind the per-attempt timeout, behind the
// retries. It has no Timeout of its own: the call's context is its bound.
func HTTPClient(next http.RoundTripper, o Options) *http.Client {
	return &http.Client{Transport: Transport(next, o)}
}

// Transport returns the retrying RoundTripper of HTTPClient.
func Transport(next http.RoundTripper, o Options) http.RoundTripper {
	o = o.withDefaults()
	if next == nil {
		next = http.DefaultTransport
	}
	c := retryablehttp.NewClient()
	c.HTTPClient = &http.Client{Transport: &attemptTransport{next: next, timeout: o.AttemptTimeout}}
	c.Logger = log.New(io.Discard, "", 0)
	// The loop's end is decided in check; this bound is never reached.
	c.RetryMax = o.MaxRetries + 1
	c.ErrorHandler = retryablehttp.PassthroughErrorHandler
	// check has already waited.
	c.Backoff = func(time.Duration, time.Duration, int, *http.Response) time.Duration { return 0 }
	c.CheckRetry = o.check
	return &transport{rt: &retryablehttp.RoundTripper{Client: c}}
}

type stateKey struct{}

// state is one call's record, kept in its request's context.
type state struct {
	mu       sync.Mutex
	attempts int
	stop     clients.RetryStop
	wait     time.Duration
}

// Outcome says how a call's retries ended, read from its final answer:
// the number of attempts and, when the retries stopped without success, why
// ("" when the answer is a success or not retryable). resp may be nil.
func Outcome(resp *http.Response) (attempts int, stop clients.RetryStop, wait time.Duration) {
	if resp == nil || resp.Request == nil {
		return 0, "", 0
	}
	st, _ := resp.Request.Context().Value(stateKey{}).(*state)
	if st == nil {
		return 0, "", 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.attempts, st.stop, st.wait
}

// Wrap returns apiErr as a *clients.RetryError when resp is the last answer
// of retries that stopped without success, else apiErr unchanged.
func Wrap(resp *http.Response, apiErr error) error {
	attempts, stop, wait := Outcome(resp)
	if stop == "" || apiErr == nil {
		return apiErr
	}
	return &clients.RetryError{Attempts: attempts, Reason: stop, Wait: wait, Err: apiErr}
}

type transport struct{ rt *retryablehttp.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	st := &state{}
	req = req.WithContext(context.WithValue(req.Context(), stateKey{}, st))
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.stop != "" && req.Context().Err() == nil {
			return nil, &clients.RetryError{Attempts: st.attempts, Reason: st.stop, Wait: st.wait, Err: err}
		}
		return nil, err
	}
	return resp, nil
}

// check is retryablehttp's CheckRetry: it decides whether the attempt just
// made is retried and, when it is, spends the wait before returning true.
func (o Options) check(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st, _ := ctx.Value(stateKey{}).(*state)
	if st == nil {
		st = &state{}
	}
	st.mu.Lock()
	st.attempts++
	attempts := st.attempts
	st.mu.Unlock()
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	retry, perr := retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	if !retry || perr != nil {
		return false, perr
	}
	stop := func(why clients.RetryStop, wait time.Duration) (bool, error) {
		st.mu.Lock()
		st.stop, st.wait = why, wait
		st.mu.Unlock()
		return false, nil
	}
	if o.MaxRetries == 0 {
		// Retries are off: the answer is the caller's, as it is.
		return false, nil
	}
	if attempts > o.MaxRetries {
		return stop(clients.RetriesExhausted, 0)
	}
	wait, asked := o.wait(attempts, resp)
	if asked && wait > o.MaxWait {
		return stop(clients.WaitTooLong, wait)
	}
	if asked && o.Jitter > 0 {
		wait += rand.N(o.Jitter + 1)
	}
	if deadline, ok := ctx.Deadline(); ok && !o.Clock.Now().Add(wait).Before(deadline) {
		return stop(clients.DeadlineTooSoon, wait)
	}
	if err := o.Clock.Sleep(ctx, wait); err != nil {
		return false, err
	}
	return true, nil
}

// wait is how long to wait before attempt number attempts+1: what the server
// asked (asked is true), else an exponential backoff with full jitter.
func (o Options) wait(attempts int, resp *http.Response) (d time.Duration, asked bool) {
	now := o.Clock.Now()
	if at, ok := RetryAt(resp, now); ok {
		return max(at.Sub(now), 0), true
	}
	ceiling := o.WaitMin << min(attempts-1, 30)
	if ceiling > o.WaitMax || ceiling <= 0 {
		ceiling = o.WaitMax
	}
	return o.WaitMin/2 + rand.N(ceiling-o.WaitMin/2+1), false
}

// RetryAt reads when the server allows the next request: Retry-After
// (seconds or an HTTP date) on a 429 or 503; on a 429 without it,
// X-RateLimit-Retry-At, then X-RateLimit-Reset (Unix seconds; a value below
// 10^9 is read as seconds from now).
func RetryAt(resp *http.Response, now time.Time) (time.Time, bool) {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return time.Time{}, false
	}
	if v := resp.Header.Get("Retry-After"); v != "" {
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
			return now.Add(time.Duration(secs) * time.Second), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return t, true
		}
	}
	if resp.StatusCode != http.StatusTooManyRequests {
		return time.Time{}, false
	}
	for _, h := range []string{"X-RateLimit-Retry-At", "X-RateLimit-Reset"} {
		secs, err := strconv.ParseInt(resp.Header.Get(h), 10, 64)
		if err != nil || secs < 0 {
			continue
		}
		if secs < 1e9 {
			return now.Add(time.Duration(secs) * time.Second), true
		}
		return time.Unix(secs, 0), true
	}
	return time.Time{}, false
}

// attemptTransport bounds one attempt with its own timeout, from sending the
// request to closing the answer's body.
type attemptTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.timeout < 0 {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeoutCause(req.Context(), t.timeout, ErrAttemptTimeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if ctx.Err() != nil && req.Context().Err() == nil && !errors.Is(err, ErrAttemptTimeout) {
			return nil, errors.Join(ErrAttemptTimeout, err)
		}
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// ErrAttemptTimeout is the error of an attempt that outlived
// clients.RetryPolicy.AttemptTimeout; it is a context.DeadlineExceeded.
var ErrAttemptTimeout = fmt.Errorf("the attempt timed out (AttemptTimeout): %w", context.DeadlineExceeded)

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
