package apiserver

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ReadyPath is the readiness endpoint every port of `apistack serve` answers
// for a load balancer: 200 while the process takes traffic, 503 before its
// databases are migrated and answer, when one stops answering, and from the
// moment a graceful shutdown starts. /healthz stays liveness (200 while the
// process runs).
const ReadyPath = "/readyz"

// readyCacheFor bounds how often a busy /readyz pings the databases.
const readyCacheFor = time.Second

// errNotStarted and errDraining are why a replica is not ready.
var (
	errNotStarted = errors.New("starting")
	errDraining   = errors.New("shutting down")
)

// Readiness is the readiness of one process, shared by all its ports.
type Readiness struct {
	ping     func(context.Context) error
	now      func() time.Time
	started  atomic.Bool
	draining atomic.Bool

	mu        sync.Mutex
	checkedAt time.Time
	lastErr   error
}

// NewReadiness returns a Readiness that is not ready until Start; ping checks
// that the databases answer (it is called at most once a second).
func NewReadiness(ping func(context.Context) error) *Readiness {
	return &Readiness{ping: ping, now: time.Now}
}

// Start marks the process ready to take traffic: its migrations are applied
// and its servers built.
func (r *Readiness) Start() { r.started.Store(true) }

// Drain marks the process as shutting down: from now on it is never ready.
func (r *Readiness) Drain() { r.draining.Store(true) }

// Check returns nil when the process is ready, or why it is not.
func (r *Readiness) Check(ctx context.Context) error {
	if r.draining.Load() {
		return errDraining
	}
	if !r.started.Load() {
		return errNotStarted
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); r.checkedAt.IsZero() || now.Sub(r.checkedAt) >= readyCacheFor {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		r.lastErr = r.ping(ctx)
		cancel()
		r.checkedAt = r.now()
	}
	return r.lastErr
}

// Wrap serves ReadyPath ahead of next (not logged, not validated: a load
// balancer asks every second or so) and passes every other request on.
func (r *Readiness) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != ReadyPath {
			next.ServeHTTP(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if err := r.Check(req.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			// The reason is one of ours or a database error's class, never a
			// connection string.
			reason := "database unavailable"
			if errors.Is(err, errDraining) || errors.Is(err, errNotStarted) {
				reason = err.Error()
			}
			_, _ = w.Write([]byte(`{"status":"unavailable","reason":"` + reason + `"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ready"}`))
	})
}
