// Package retry is the clients' retry layer, on hashicorp/go-retryablehttp:
// it retries connection failures, 429 and 5xx answers (501 excepted), waits
// as long as the server asks (each API says so in its own header) plus a
// random jitter so callers told the same instant do not all come back at once,
// and otherwise backs off exponentially with jitter. Every wait ends with the
// request's context.
package retry

import (
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Policy configures retries.
type Policy struct {
	// MaxRetries is the number of retries after the first attempt (default 8).
	MaxRetries int
	// WaitMin and WaitMax bound the exponential backoff (defaults 100ms, 10s).
	WaitMin, WaitMax time.Duration
	// Jitter is the largest random delay added to a server-given wait
	// (default 1s).
	Jitter time.Duration
	// RetryAt reads, from a 429 or 503 answer, when the server allows the next
	// request. Nil falls back to the standard Retry-After header.
	RetryAt func(resp *http.Response) (time.Time, bool)
	// Now is the clock waits are computed with (default time.Now).
	Now func() time.Time
}

// Transport returns a RoundTripper that sends through next with p's retries.
// After the last retry the server's last answer is returned as it is, so the
// caller can read its error body.
func Transport(next http.RoundTripper, p Policy) http.RoundTripper {
	if p.MaxRetries == 0 {
		p.MaxRetries = 8
	}
	if p.WaitMin == 0 {
		p.WaitMin = 100 * time.Millisecond
	}
	if p.WaitMax == 0 {
		p.WaitMax = 10 * time.Second
	}
	if p.Jitter == 0 {
		p.Jitter = time.Second
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.RetryAt == nil {
		p.RetryAt = RetryAfter(p.Now)
	}
	c := retryablehttp.NewClient()
	c.HTTPClient = &http.Client{Transport: next}
	c.Logger = log.New(io.Discard, "", 0)
	c.RetryMax = p.MaxRetries
	c.RetryWaitMin, c.RetryWaitMax = p.WaitMin, p.WaitMax
	c.ErrorHandler = retryablehttp.PassthroughErrorHandler
	c.Backoff = p.backoff
	return &retryablehttp.RoundTripper{Client: c}
}

func (p Policy) backoff(waitMin, waitMax time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if at, ok := p.RetryAt(resp); ok {
			wait := at.Sub(p.Now())
			if wait < 0 {
				wait = 0
			}
			return wait + rand.N(p.Jitter+1)
		}
	}
	// Exponential backoff with "full jitter": a random wait up to the cap.
	ceiling := waitMin << min(attempt, 30)
	if ceiling > waitMax || ceiling <= 0 {
		ceiling = waitMax
	}
	return waitMin/2 + rand.N(ceiling-waitMin/2+1)
}

// RetryAfter reads the standard Retry-After header (seconds or an HTTP date).
func RetryAfter(now func() time.Time) func(*http.Response) (time.Time, bool) {
	return func(resp *http.Response) (time.Time, bool) {
		v := resp.Header.Get("Retry-After")
		if v == "" {
			return time.Time{}, false
		}
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			return now().Add(time.Duration(secs) * time.Second), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return t, true
		}
		return time.Time{}, false
	}
}

// UnixHeader reads a header holding Unix seconds (PAM's X-RateLimit-Retry-At).
func UnixHeader(name string) func(*http.Response) (time.Time, bool) {
	return func(resp *http.Response) (time.Time, bool) {
		secs, err := strconv.ParseInt(resp.Header.Get(name), 10, 64)
		if err != nil || secs <= 0 {
			return time.Time{}, false
		}
		return time.Unix(secs, 0), true
	}
}
