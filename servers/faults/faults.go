// Package faults makes an API misbehave on demand, for tests of the services
// that call it (the test kit, apistacktest): the next N requests of an
// operation, or a share of them, answer 429 with the API's rate-limit
// headers, 503, 500 with the API's documented error body, answer slowly, or
// have their connection dropped; webhook deliveries come twice or out of
// order. It also watches the requests that break the spec and reports them
// (Violation), so the kit can fail the consumer's test.
//
// An Injector hooks into an API through apiserver.Hooks; its middleware runs
// before authentication, rate limits and validation, and a fault's answer is
// never checked against the spec.
package faults

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/faxserver"
	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/gen/restaurantserver"
	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/gen/storageserver"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/validation"
)

// Kind is what a fault does to a request.
type Kind int

// The kinds of fault.
const (
	// RateLimited answers 429 with the API's rate-limit headers (PAM's
	// X-RateLimit-*, Retry-After elsewhere) telling the caller to come back
	// after Fault.RetryAfter.
	RateLimited Kind = iota + 1
	// Unavailable answers 503 (PAM's service_offline) with Retry-After.
	Unavailable
	// InternalError answers 500 with the API's documented error body.
	InternalError
	// Slow holds the request for Fault.Delay (real time, so the caller's
	// timeout can fire), then serves it normally.
	Slow
	// Drop closes the connection without an answer.
	Drop
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case RateLimited:
		return "rate-limited"
	case Unavailable:
		return "unavailable"
	case InternalError:
		return "internal-error"
	case Slow:
		return "slow"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Fault is one rule: which requests it takes and what it does to them.
type Fault struct {
	// Kind is what the fault does.
	Kind Kind
	// Operation is the spec's operationId the fault applies to; "" means
	// every operation of the API.
	Operation string
	// Count is how many of the next matching requests the fault takes; 0
	// with Share unset means every one.
	Count int
	// Share, between 0 and 1, is the chance a matching request is taken
	// (with Count, until Count were taken).
	Share float64
	// RetryAfter is what a 429 or 503 tells the caller to wait (whole
	// seconds on the wire, at least 1); 0 means one second.
	RetryAfter time.Duration
	// Delay is how long a Slow fault holds the request; 0 means 2 seconds.
	Delay time.Duration
}

type rule struct {
	Fault
	taken int
}

// Violation is a request that broke the API's spec.
type Violation struct {
	// API is the API's name ("pam").
	API string
	// Operation is the operationId the request was routed to, "" when no
	// operation has its method and path.
	Operation string
	// Method and Path are the request's.
	Method, Path string
	// Failure is what the validation found: each cause names where (query,
	// header, body, by parameter name or JSON pointer) and the rule broken.
	Failure *validation.Failure
}

// Error says what broke the spec, naming the operation, the field and the
// rule.
func (v Violation) Error() string {
	op := v.Operation
	if op == "" {
		op = "(no operation)"
	}
	// The failure's message names each field (parameter or JSON pointer)
	// and the rule it broke.
	return fmt.Sprintf("%s %s (%s %s): request breaks the spec: %s", v.API, op, v.Method, v.Path, v.Failure.Message)
}

// Injector holds the faults of one API and watches its spec violations. It
// is safe for concurrent use.
type Injector struct {
	api         string
	spec        *openapi3.T
	router      routers.Router
	clock       clock.Clock
	onViolation func(Violation)

	mu    sync.Mutex
	rules []*rule
	seen  map[Kind]int
}

// routed is an API's spec and its router, read once per process: an
// Injector is made per test, and parsing a spec costs milliseconds.
type routed struct {
	spec   *openapi3.T
	router routers.Router
	err    error
}

var (
	specsOnce sync.Once
	specs     map[string]routed
)

func specOf(api string) (routed, error) {
	specsOnce.Do(func() {
		specs = map[string]routed{}
		for name, get := range map[string]func() (*openapi3.T, error){
			"pam": pamserver.GetSpec, "fax": faxserver.GetSpec, "storage": storageserver.GetSpec, "restaurant": restaurantserver.GetSpec,
		} {
			var r routed
			if r.spec, r.err = apiserver.Spec(name, get); r.err == nil {
				r.router, r.err = validation.NewRouter(r.spec)
			}
			specs[name] = r
		}
	})
	r, ok := specs[api]
	if !ok {
		return r, fmt.Errorf("faults: unknown API %q", api)
	}
	if r.err != nil {
		return r, fmt.Errorf("faults: the spec of %s: %w", api, r.err)
	}
	return r, nil
}

// New returns an Injector for api ("pam", "fax", "storage", "restaurant");
// clk dates the rate-limit headers (nil: the system clock); onViolation (may
// be nil) hears of each request that breaks the spec.
func New(api string, clk clock.Clock, onViolation func(Violation)) (*Injector, error) {
	r, err := specOf(api)
	if err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.System{}
	}
	return &Injector{api: api, spec: r.spec, router: r.router, clock: clk, onViolation: onViolation, seen: map[Kind]int{}}, nil
}

// Add installs a fault; faults are tried in the order they were added, and
// the first that takes a request acts on it.
func (in *Injector) Add(f Fault) error {
	if f.Kind < RateLimited || f.Kind > Drop {
		return fmt.Errorf("faults: unknown kind %d", int(f.Kind))
	}
	if f.Share < 0 || f.Share > 1 || f.Count < 0 {
		return errors.New("faults: Share must be within [0, 1] and Count not negative")
	}
	if f.Operation != "" && !in.hasOperation(f.Operation) {
		return fmt.Errorf("faults: the %s API has no operation %q", in.api, f.Operation)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rules = append(in.rules, &rule{Fault: f})
	return nil
}

// Clear removes every fault.
func (in *Injector) Clear() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rules = nil
}

// Injected returns how many requests faults of kind k took so far.
func (in *Injector) Injected(k Kind) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.seen[k]
}

func (in *Injector) hasOperation(id string) bool { return hasOperation(in.spec, id) }

func hasOperation(spec *openapi3.T, id string) bool {
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID == id {
				return true
			}
		}
	}
	return false
}

// CheckOperation returns an error naming what is wrong unless api is one of
// the APIs faults know ("pam", "fax", "storage", "restaurant") and op is ""
// or an operationId of its spec.
func CheckOperation(api, op string) error {
	r, err := specOf(api)
	if err != nil {
		return err
	}
	if op != "" && !hasOperation(r.spec, op) {
		return fmt.Errorf("faults: the %s API has no operation %q", api, op)
	}
	return nil
}

// Hooks returns the hooks to give the API's server (its Config.Hooks).
func (in *Injector) Hooks() apiserver.Hooks {
	return apiserver.Hooks{Middleware: in.middleware, OnError: in.onError}
}

func (in *Injector) operation(r *http.Request) string {
	route, _, err := in.router.FindRoute(r)
	if err != nil || route.Operation == nil {
		return ""
	}
	return route.Operation.OperationID
}

// take returns the fault that takes a request of op, if any.
func (in *Injector) take(op string) (Fault, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i, r := range in.rules {
		if r.Operation != "" && r.Operation != op {
			continue
		}
		if r.Share > 0 && rand.Float64() >= r.Share {
			continue
		}
		r.taken++
		if r.Count > 0 && r.taken >= r.Count {
			in.rules = append(in.rules[:i:i], in.rules[i+1:]...)
		}
		in.seen[r.Kind]++
		return r.Fault, true
	}
	return Fault{}, false
}

func (in *Injector) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		in.mu.Lock()
		none := len(in.rules) == 0
		in.mu.Unlock()
		if none {
			return next(c)
		}
		f, ok := in.take(in.operation(c.Request()))
		if !ok {
			return next(c)
		}
		switch f.Kind {
		case Slow:
			if !Hold(c.Request().Context(), f) {
				return nil
			}
			return next(c)
		case Drop:
			return DropConnection(c)
		}
		return Answer(c, in.api, f, in.clock.Now())
	}
}

// DefaultDelay is how long a Slow fault without a Delay holds a request.
const DefaultDelay = 2 * time.Second

// Hold waits for the delay of a Slow fault f (real time, so the caller's
// timeout can fire); it returns false when ctx ended first.
func Hold(ctx context.Context, f Fault) bool {
	delay := f.Delay
	if delay == 0 {
		delay = DefaultDelay
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// DropConnection closes the request's connection without an answer (a Drop
// fault).
func DropConnection(c echo.Context) error {
	conn, _, err := c.Response().Hijack()
	if err != nil {
		return fmt.Errorf("faults: drop the connection: %w", err)
	}
	return conn.Close()
}

// Answer writes the answer of a RateLimited, Unavailable or InternalError
// fault f to a request of api, in the API's own shape (its documented
// error body, PAM's X-RateLimit-* headers dated from now, Retry-After).
func Answer(c echo.Context, api string, f Fault, now time.Time) error {
	status := map[Kind]int{RateLimited: http.StatusTooManyRequests, Unavailable: http.StatusServiceUnavailable, InternalError: http.StatusInternalServerError}[f.Kind]
	retry := max(int((f.RetryAfter+time.Second-1)/time.Second), 1)
	h := c.Response().Header()
	if status != http.StatusInternalServerError {
		h.Set("Retry-After", strconv.Itoa(retry))
	}
	const msg = "fault injected by the test kit"
	switch api {
	case "pam":
		at := strconv.FormatInt(now.Add(time.Duration(retry)*time.Second).Unix(), 10)
		h.Set("X-RateLimit-Limit", "10000")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", at)
		h.Set("X-RateLimit-Retry-At", at)
		name := map[int]pamapi.ErrorName{429: pamapi.ErrorNameTooManyRequests, 503: pamapi.ErrorNameServiceOffline, 500: pamapi.ErrorNameUnknownError}[status]
		return c.JSON(status, pamapi.Error{Code: status, Error: name, Message: msg, ErrorCause: []pamapi.ErrorCause{}})
	case "fax":
		return c.JSON(status, faxapi.Errors{Errors: []faxapi.Error{{Code: faxapi.ErrorCodeInternalError, Title: "Internal error", Detail: msg}}})
	case "restaurant":
		key := map[int]restaurantapi.ErrorKey{429: restaurantapi.ErrorKeyRATELIMITED, 503: restaurantapi.ErrorKeyINTERNALERROR, 500: restaurantapi.ErrorKeyINTERNALERROR}[status]
		code := map[restaurantapi.ErrorKey]int{restaurantapi.ErrorKeyRATELIMITED: 10029, restaurantapi.ErrorKeyINTERNALERROR: 10050}[key]
		return c.JSON(status, restaurantapi.Error{Status: status, Code: code, Message: msg, MessageKey: key,
			RequestId: uuid.NewString(), CanRetry: true, Errors: []restaurantapi.ErrorDetail{}})
	default: // storage: S3's XML <Error>
		id := uuid.NewString()
		h.Set("X-Cloud-Request-Id", id)
		resource := c.Request().URL.Path
		code := storageapi.ErrorCodeInternalError
		body, err := xml.Marshal(storageapi.Error{Code: code, Message: msg, Resource: &resource, RequestId: id})
		if err != nil {
			return err
		}
		return c.Blob(status, "application/xml", append([]byte(xml.Header), body...))
	}
}

// onError reports a request that broke the spec: a validation failure of its
// parameters, body or media type, or a method and path no operation has.
// Failed authentication is not one (a consumer's test may well send an
// expired token), nor a body over the server's limit.
func (in *Injector) onError(c echo.Context, err error) {
	var f *validation.Failure
	if in.onViolation == nil || !errors.As(err, &f) {
		return
	}
	switch f.Kind {
	case validation.KindInvalid, validation.KindUnsupportedMediaType, validation.KindNotFound, validation.KindMethodNotAllowed:
	default:
		return
	}
	r := c.Request()
	in.onViolation(Violation{API: in.api, Operation: in.operation(r), Method: r.Method, Path: r.URL.Path, Failure: f})
}
