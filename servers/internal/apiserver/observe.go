package apiserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/servers/internal/requestlog"
)

// Observer hears of every request an API answers, but for the endpoints
// every port serves (/healthz, /openapi.yaml, /docs/): the metrics and the
// web console's request log.
type Observer interface {
	// ObserveRequest is called once per request, once its response is
	// written, with the spec violations found in the response by then.
	ObserveRequest(e requestlog.Entry)
	// ObserveViolations is called when a response checked after it was sent
	// (--validate-responses) breaks the spec: e is the request's entry (the
	// same ID) holding only the violations found since.
	ObserveViolations(e requestlog.Entry)
}

// operationKey is the echo context key under which the body gate records
// the operationId of the request's route ("" when none matched).
const operationKey = "apiserver.operation"

// maxViolationBytes caps one violation's message in an entry.
const maxViolationBytes = 500

// requestIDs numbers the observed requests of the process.
var requestIDs atomic.Uint64

// observation is what is known of one request while it is answered; the
// response validation finds it in the request's context.
type observation struct {
	mu         sync.Mutex
	entry      requestlog.Entry
	sent       bool // ObserveRequest was called: later violations go on their own
	violations []string
}

type observationKey struct{}

// observe is the middleware that reports each request to o. The operation
// is the one the body gate found; a request answered before the gate (a
// rate limit, maintenance mode) is routed here. When responses are checked
// (checked), the request's context carries its observation for
// observeViolations.
func observe(o Observer, api string, router routers.Router, checked bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if isCommonPath(req.URL.Path) {
				return next(c)
			}
			start := time.Now()
			obs := &observation{entry: requestlog.Entry{
				ID: requestIDs.Add(1), Time: start, API: api, Method: req.Method, Path: req.URL.Path,
			}}
			if checked {
				c.SetRequest(req.WithContext(context.WithValue(req.Context(), observationKey{}, obs)))
			}
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			op, routed := c.Get(operationKey).(string)
			if !routed {
				if route, _, err := router.FindRoute(req); err == nil {
					op = route.Operation.OperationID
				}
			}
			obs.mu.Lock()
			obs.entry.Operation = op
			obs.entry.Status = answeredStatus(c)
			obs.entry.Latency = time.Since(start)
			obs.entry.Violations = obs.violations
			obs.sent = true
			e := obs.entry
			obs.mu.Unlock()
			o.ObserveRequest(e)
			return nil
		}
	}
}

// observeViolations wraps the validation's violation hook so that each
// violation also reaches the request's entry: in it when the response was
// checked before the entry was made (strict mode), as an ObserveViolations
// follow-up when it was checked after (background mode).
// With no hook, a violation is logged, as the validation does.
func observeViolations(o Observer, hook func(*http.Request, int, error), logger *slog.Logger) func(*http.Request, int, error) {
	if hook == nil {
		hook = func(r *http.Request, status int, err error) {
			logger.ErrorContext(r.Context(), "response breaks the spec",
				"method", r.Method, "path", r.URL.Path, "status", status, "err", err)
		}
	}
	return func(r *http.Request, status int, err error) {
		hook(r, status, err)
		obs, _ := r.Context().Value(observationKey{}).(*observation)
		if obs == nil {
			return
		}
		msgs := violationMessages(err)
		obs.mu.Lock()
		if !obs.sent {
			obs.violations = append(obs.violations, msgs...)
			obs.mu.Unlock()
			return
		}
		e := obs.entry
		obs.mu.Unlock()
		e.Violations = msgs
		o.ObserveViolations(e)
	}
}

// violationMessages turns a violation into the lines an entry shows: one
// per schema error, each naming where it is and why, never the offending
// value (a response can carry a secret, which kin-openapi's messages quote).
func violationMessages(err error) []string {
	var out []string
	var walk func(prefix string, err error)
	walk = func(prefix string, err error) {
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, x := range e {
				walk(prefix, x)
			}
			return
		case *openapi3.SchemaError:
			at := ""
			if p := e.JSONPointer(); len(p) > 0 {
				at = `at "/` + strings.Join(p, "/") + `": `
			}
			if e.Origin != nil {
				walk(prefix+at, e.Origin)
				return
			}
			reason := e.Reason
			if reason == "" {
				reason = `doesn't match schema "` + e.SchemaField + `"`
			}
			out = append(out, clip(prefix+at+reason))
			return
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(prefix, x)
			}
			return
		}
		if inner := errors.Unwrap(err); inner != nil {
			if p, ok := strings.CutSuffix(err.Error(), inner.Error()); ok {
				walk(prefix+p, inner)
				return
			}
		}
		line, _, _ := strings.Cut(err.Error(), "\n")
		out = append(out, clip(prefix+line))
	}
	walk("", err)
	return out
}

func clip(s string) string {
	if len(s) <= maxViolationBytes {
		return s
	}
	return strings.ToValidUTF8(s[:maxViolationBytes], "") + "…"
}
