// Package apiserver assembles one API's echo server the same way for every
// API: structured request logs (499 when the caller went away), panic
// recovery into the API's own 500 body, the API's extra middleware (auth
// resolution, rate limits), the body gate (a secured operation's caller is
// authenticated before a byte of the body is read, and each operation's body
// is held to its own limit), spec validation, and the endpoints every port
// serves: /healthz, /openapi.yaml and /docs/ (and /readyz, see Readiness).
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/swaggest/swgui/v5emb"

	"github.com/apistack/apistack/servers/internal/validation"
	"github.com/apistack/apistack/specs"
)

// StatusClientClosedRequest is logged when the caller closed the connection
// before the response was written (nginx's 499).
const StatusClientClosedRequest = 499

// Config describes one API's server.
type Config struct {
	// Name is the API's name, as in specs/<name>/openapi.yaml ("pam").
	Name string
	// Title is shown on the docs page.
	Title string
	// Validation configures request (and response) validation.
	Validation validation.Options
	// ErrorHandler renders every error (validation failures, handler errors,
	// panics) in the API's own error shape.
	ErrorHandler echo.HTTPErrorHandler
	// Before runs, in order, before validation: middleware that must see
	// every request, valid or not (auth resolution, rate limits, maintenance
	// mode). It must not read the body: the caller is not yet known to be
	// allowed to send one.
	Before []echo.MiddlewareFunc
	// AfterAuth runs, in order, after the authentication gate and before
	// validation: middleware that reads the body. By then a request to a
	// secured operation whose caller failed authentication has no body.
	AfterAuth []echo.MiddlewareFunc
	// MaxBodyBytes caps the body of every operation not in BodyLimits; 0
	// means 1 MiB.
	MaxBodyBytes int64
	// BodyLimits caps the body of an operation, by operationId, in place of
	// MaxBodyBytes.
	BodyLimits map[string]int64
	// Logger receives the request logs; nil means slog.Default().
	Logger *slog.Logger
	// Hooks let the in-process test kit steer and watch the API (faults on
	// demand, the spec violations of a consumer's requests); the zero value
	// does nothing.
	Hooks Hooks
	// Observer hears of every request answered (metrics, the console's
	// request log); nil means none.
	Observer Observer
	// Journal keeps the requests made with a journaled tenant set's
	// credentials (sandboxes); nil keeps none.
	Journal Journal
}

// Hooks are the test kit's way into an API (servers/internal/faults).
type Hooks struct {
	// Middleware runs for every request first, after the request log and
	// panic recovery: what it answers is logged, and never validated.
	Middleware echo.MiddlewareFunc
	// OnError hears of every error the API's error handler renders, before
	// it is rendered: a *validation.Failure for a request that breaks the
	// spec.
	OnError func(c echo.Context, err error)
}

// New returns an echo instance with the common endpoints and middleware. The
// caller registers the generated handlers on it.
func New(cfg Config) (*echo.Echo, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	spec, err := fs.ReadFile(specs.FS, cfg.Name+"/openapi.yaml")
	if err != nil {
		return nil, fmt.Errorf("apiserver: spec of %q: %w", cfg.Name, err)
	}
	maxBody := cfg.MaxBodyBytes
	if maxBody == 0 {
		maxBody = 1 << 20
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = tooLargeAsFailure(noteViolations(cfg.ErrorHandler))
	if onError := cfg.Hooks.OnError; onError != nil {
		render := e.HTTPErrorHandler
		e.HTTPErrorHandler = func(err error, c echo.Context) { onError(c, err); render(err, c) }
	}

	vopts := cfg.Validation
	if vopts.API == "" {
		vopts.API = cfg.Name
	}
	if cfg.Observer != nil {
		vopts.OnResponseViolation = observeViolations(cfg.Observer, vopts.OnResponseViolation, logger)
	}
	userSkip := vopts.Skip
	vopts.Skip = func(r *http.Request) bool {
		return isCommonPath(r.URL.Path) || (userSkip != nil && userSkip(r))
	}
	// checkAnswers holds to the spec every answer from the body cap on,
	// those of the middleware that refuse a request before validate checks
	// it (a body that stalled under them included) as well as the handler's.
	checkAnswers, validate, err := validation.Split(vopts)
	if err != nil {
		return nil, err
	}

	router, err := validation.NewRouter(vopts.Spec)
	if err != nil {
		return nil, err
	}
	gate := &bodyGate{router: router, authenticate: vopts.Authenticate, limit: maxBody, limits: cfg.BodyLimits,
		noteOperation: cfg.Observer != nil || cfg.Journal != nil}

	if cfg.Observer != nil {
		e.Use(observe(cfg.Observer, cfg.Name, router, vopts.ValidateResponses))
	}
	if cfg.Journal != nil {
		e.Use(journal(cfg.Journal, cfg.Name, router))
	}
	e.Use(requestLogger(logger, cfg.Name))
	e.Use(recoverer(logger))
	if cfg.Hooks.Middleware != nil {
		e.Use(cfg.Hooks.Middleware)
	}
	// Nothing in Before reads past the largest limit of any operation; the
	// gate then holds each request to its own operation's.
	e.Use(checkAnswers)
	e.Use(capBody(gate.largest()))
	e.Use(cfg.Before...)
	if cfg.Journal != nil {
		// A request a sandbox's fault took goes no further.
		e.Use(skipFaulted)
	}
	e.Use(gate.middleware(vopts.Skip))
	e.Use(cfg.AfterAuth...)
	e.Use(validate)
	e.Use(recoverer(logger))
	if cfg.Journal != nil {
		e.Use(skipFaulted)
	}

	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/openapi.yaml", func(c echo.Context) error {
		return c.Blob(http.StatusOK, "application/yaml", spec)
	})
	docsYAML, err := docsSpecOf(cfg.Name, spec)
	if err != nil {
		return nil, fmt.Errorf("apiserver: %s: %w", cfg.Name, err)
	}
	e.GET(docsSpecPath, func(c echo.Context) error {
		return c.Blob(http.StatusOK, "application/yaml", docsYAML)
	})
	// The page and its assets are embedded (no CDN) and it calls no
	// validator service: it works offline.
	docs := v5emb.New(cfg.Title, docsSpecPath, "/docs/")
	e.GET("/docs", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/docs/") })
	e.GET("/docs/*", echo.WrapHandler(docs))
	return e, nil
}

func isCommonPath(p string) bool {
	return p == "/healthz" || p == ReadyPath || p == "/openapi.yaml" || p == "/docs" || strings.HasPrefix(p, "/docs/")
}

// requestLogger logs one line per request. A request whose caller went away
// before the response is logged with status 499, whatever the handler wrote.
func requestLogger(logger *slog.Logger, api string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			req := c.Request()
			status := answeredStatus(c)
			level := slog.LevelInfo
			if status == StatusClientClosedRequest {
				level = slog.LevelWarn
			} else if status >= 500 {
				level = slog.LevelError
			}
			logger.LogAttrs(req.Context(), level, "request",
				slog.String("api", api),
				slog.String("method", req.Method),
				slog.String("path", req.URL.Path),
				slog.Int("status", status),
				slog.Duration("latency", time.Since(start)),
				slog.String("remote", c.RealIP()),
			)
			return nil
		}
	}
}

// answeredStatus is the status a request is logged with: the response's,
// or 499 when the caller went away before it.
func answeredStatus(c echo.Context) int {
	if c.Response().Committed && c.Response().Status == http.StatusRequestTimeout {
		// A stalled body: net/http ends the request's context as the read
		// times out, but the 408 was sent, and the caller may read it.
		return http.StatusRequestTimeout
	}
	if errors.Is(c.Request().Context().Err(), context.Canceled) {
		return StatusClientClosedRequest
	}
	return c.Response().Status
}

// recoverer turns a panic into an error for the API's error handler (a 500 in
// the API's body) and logs the stack, never sending it to the caller.
func recoverer(logger *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableErrorHandler: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			logger.ErrorContext(c.Request().Context(), "panic", "err", err, "stack", string(stack))
			return fmt.Errorf("internal error: %w", err)
		},
	})
}

// capBody wraps every request body in a reader that fails past limit bytes,
// over the bodyWatch that sees how every read of it failed.
// It wraps a copy of the request: the one the server holds keeps its own
// body, so net/http still sees what was left unread when the handler ends.
func capBody(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.Body != nil && req.Body != http.NoBody {
				c.Set(sentBodyKey, true)
				watched, watch := watchBody(req)
				c.Set(bodyWatchKey, watch)
				capped := req.WithContext(req.Context())
				capped.Body = http.MaxBytesReader(c.Response(), watched.Body, limit)
				c.SetRequest(capped)
			}
			return next(c)
		}
	}
}

// tooLargeAsFailure is the one place where a body that could not be read is
// mapped onto what it was, for every API. It hands a body that stalled past
// the read timeout to the API's error handler as the KindTimeout failure
// every API renders as its 408; a body that did not arrive whole (malformed
// chunked framing, an end before its declared length) as the KindMalformed
// failure every API renders as a 400, rather than the authentication failure, database outage
// or internal error its reader made of it; and a body read past its limit
// (an *http.MaxBytesError, whoever read it: the validation, a middleware, a
// handler) as the KindTooLarge failure every API renders as its 413, rather
// than as an unexpected error (a 500).
func tooLargeAsFailure(handler echo.HTTPErrorHandler) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		var failure *validation.Failure
		var tooLarge *http.MaxBytesError
		if w, ok := c.Get(bodyWatchKey).(*bodyWatch); (ok && w.timedOut.Load()) || errors.Is(err, ErrBodyTimeout) {
			// Whatever the reader made of it (a decoding error, an
			// authentication failure), the body did not arrive: 408,
			// naming no address.
			err = &validation.Failure{Kind: validation.KindTimeout, Message: BodyTimeoutMessage, Err: ErrBodyTimeout}
		} else if broken := w.brokenRead(); ok && broken != nil {
			err = &validation.Failure{Kind: validation.KindMalformed, Err: broken,
				Message: brokenBodyMessage(c.Request(), broken),
				Causes:  []validation.Cause{{In: "body", Message: brokenBodyMessage(c.Request(), broken)}}}
			// What is left of the body is not read: the connection ends
			// with the answer.
			c.Response().Header().Set("Connection", "close")
		}
		if !errors.As(err, &failure) && errors.As(err, &tooLarge) {
			err = tooLargeFailure(tooLarge.Limit, err)
		}
		if errors.As(err, &tooLarge) {
			// The rest of the body is not read: the connection ends with
			// the answer.
			c.Response().Header().Set("Connection", "close")
		}
		handler(err, c)
	}
}

func tooLargeFailure(limit int64, err error) *validation.Failure {
	return &validation.Failure{Kind: validation.KindTooLarge, Err: err,
		Message: fmt.Sprintf("the request body is over the limit of %d bytes", limit)}
}
