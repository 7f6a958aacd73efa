package conform

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apistack/apistack/protocol/contract"
)

// exchange sends the requests of one API through the contract transport.
type exchange struct {
	base string
	// strict validates the request and the response; lenient only the
	// response, for checks that send bad input on purpose.
	strict, lenient *http.Client
	// retryRateLimited waits out a 429 with Retry-After and sends again (the
	// restaurant API's 20 requests a second are easy to reach in a walk).
	retryRateLimited bool
}

func newExchange(api contract.API, base string, next http.RoundTripper) (*exchange, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an http(s) URL", base)
	}
	// What the target answers is checked, never counted in apistack's
	// contract coverage: the target may be any service, a mock included.
	strict, err := contract.ForAPI(api, next, contract.WithoutCoverage())
	if err != nil {
		return nil, err
	}
	lenient, err := contract.ForAPI(api, next, contract.WithoutRequestValidation(), contract.WithoutCoverage())
	if err != nil {
		return nil, err
	}
	return &exchange{
		base:    u.String(),
		strict:  &http.Client{Transport: strict, CheckRedirect: noRedirects},
		lenient: &http.Client{Transport: lenient, CheckRedirect: noRedirects},
	}, nil
}

// noRedirects keeps a redirect as the answer: the specs declare none.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// request is one HTTP request of a check.
type request struct {
	// op names the operation (the spec's operationId) in failure details.
	op     string
	method string
	// path is relative to the base URL, or an absolute URL (a Link target).
	path   string
	header http.Header
	body   []byte
	// badInput skips the request validation: the request breaks the spec on purpose.
	badInput bool
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// send sends r and reads the answer. A transport error or a contract
// violation is an error naming the operation.
func (x *exchange) send(ctx context.Context, r request) (*response, error) {
	target := r.path
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		target = x.base + r.path
	}
	client := x.strict
	if r.badInput {
		client = x.lenient
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, r.method, target, bytes.NewReader(r.body))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.op, err)
		}
		if r.body == nil {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		for k, v := range r.header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			// A spec violation is the finding itself.
			var v *contract.Violation
			if errors.As(err, &v) {
				return nil, &violationError{op: r.op, method: r.method, path: r.path, v: v}
			}
			return nil, fmt.Errorf("%s (%s %s): %w", r.op, r.method, r.path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s (%s %s): read the answer: %w", r.op, r.method, r.path, err)
		}
		out := &response{status: resp.StatusCode, header: resp.Header, body: body}
		if wait, ok := x.rateLimited(out); ok && attempt < 5 {
			select {
			case <-time.After(wait):
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("%s: rate limited and %w", r.op, ctx.Err())
			}
		}
		return out, nil
	}
}

func (x *exchange) rateLimited(r *response) (time.Duration, bool) {
	if !x.retryRateLimited || r.status != http.StatusTooManyRequests {
		return 0, false
	}
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 0 || secs > 60 {
		return 0, false
	}
	return time.Duration(secs)*time.Second + 50*time.Millisecond, true
}

// decode reads a JSON body into v, naming the operation on failure.
func (r *response) decode(op string, v any) error {
	if err := json.Unmarshal(r.body, v); err != nil {
		return fmt.Errorf("%s: answer %d is not the expected JSON: %w", op, r.status, err)
	}
	return nil
}

// expectStatus fails unless r answered want.
func (r *response) expectStatus(op string, want int) error {
	if r.status != want {
		return fmt.Errorf("%s: want %d, got %d: %s", op, want, r.status, snippet(r.body))
	}
	return nil
}

// secretField matches a JSON string member whose name says it holds a
// credential (bearer_token, accessToken, key_secret, api_key, ...).
var secretField = regexp.MustCompile(`("[A-Za-z_]*(?i:token|secret|key)"\s*:\s*)"[^"]*"`)

// snippet is the start of a body, for failure details, with credentials
// redacted: a buggy implementation may answer a token to a wrong secret.
func snippet(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	s = secretField.ReplaceAllString(s, `$1"(redacted)"`)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// jsonBody marshals v; the values the checks build always marshal.
func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// header builds an http.Header from name, value pairs.
func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// uniqueName returns prefix followed by random hex, so concurrent runs and
// earlier runs never collide.
func uniqueName(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// cleanupContext is the context cleanups run in: the check's own may be done.
func cleanupContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
