// Package telemetry counts what the servers of one apistack process do and
// shows it two ways: as Prometheus metrics (Handler, served at /metrics on
// the admin port) and as the web console's request log (requestlog.Log).
//
// Every metric lives in the Telemetry's own registry, not Prometheus's
// global one, so several stacks in one process (tests) never collide. Every
// method is safe on a nil *Telemetry, which records nothing.
package telemetry

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/requestlog"
)

// The rate limits a refusal is counted under (the limit label).
const (
	// LimitPrincipal: PAM's bucket per authenticated principal (or per
	// source address without a valid token).
	LimitPrincipal = "principal"
	// LimitExchangeSource and LimitExchangeKey: PAM's failed token
	// exchanges per source address and per key id.
	LimitExchangeSource = "exchange_source"
	LimitExchangeKey    = "exchange_key"
	// LimitPerSecond and LimitPerWindow: the restaurant API's two limits
	// per restaurant.
	LimitPerSecond = "per_second"
	LimitPerWindow = "per_window"
)

// The outcomes of a webhook delivery attempt (the outcome label).
const (
	// OutcomeDelivered: the receiver answered 2xx.
	OutcomeDelivered = "delivered"
	// OutcomeRefused: the receiver answered another status.
	OutcomeRefused = "refused"
	// OutcomeError: no answer (connection refused, timeout, a destination
	// the policy forbids).
	OutcomeError = "error"
)

// outboxTimeout bounds the query behind the outbox gauge, run at each scrape.
const outboxTimeout = 5 * time.Second

// latencyBuckets are the request latency histogram's upper bounds, in
// seconds: most answers take well under a millisecond, a fax send or a
// restaurant import much longer.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Telemetry is the metrics registry and request log of one apistack process.
type Telemetry struct {
	registry   *prometheus.Registry
	log        *requestlog.Log
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	violations *prometheus.CounterVec
	refusals   *prometheus.CounterVec
	attempts   *prometheus.CounterVec
	steps      *prometheus.CounterVec
	outbox     atomic.Pointer[func(context.Context) (int, error)]
}

// New returns a Telemetry feeding log (nil keeps no request log).
func New(log *requestlog.Log) *Telemetry {
	t := &Telemetry{
		registry: prometheus.NewRegistry(),
		log:      log,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apistack_http_requests_total",
			Help: "Requests answered, by API, operation (the spec's operationId; empty when the request matched none) and HTTP status (499: the caller went away).",
		}, []string{"api", "operation", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apistack_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the last byte of its response, by API and operation.",
			Buckets: latencyBuckets,
		}, []string{"api", "operation"}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apistack_response_violations_total",
			Help: "Spec violations found in responses (--validate-responses), by API and operation.",
		}, []string{"api", "operation"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apistack_rate_limit_refusals_total",
			Help: "Requests refused with 429 by a rate limit, by API and limit.",
		}, []string{"api", "limit"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apistack_fax_webhook_attempts_total",
			Help: "Fax webhook delivery attempts, by outcome (delivered, refused: a non-2xx answer, error: no answer).",
		}, []string{"outcome"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apistack_fax_simulator_steps_total",
			Help: "Steps the fax transmission simulator committed, by the fax status reached.",
		}, []string{"status"}),
	}
	t.registry.MustRegister(t.requests, t.latency, t.violations, t.refusals, t.attempts, t.steps,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "apistack_fax_webhook_outbox_depth",
			Help: "Fax webhook events waiting in the outbox (neither delivered nor abandoned); NaN when the database cannot be read.",
		}, t.outboxDepth),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return t
}

// Registry is where every metric of t is registered.
func (t *Telemetry) Registry() *prometheus.Registry { return t.registry }

// Log is the request log t feeds; nil when it keeps none.
func (t *Telemetry) Log() *requestlog.Log {
	if t == nil {
		return nil
	}
	return t.log
}

// Handler serves the metrics in the Prometheus text format (or the
// format the scraper negotiates).
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{})
}

// Observer returns t as the observer of an API's requests, nil when t is
// nil (so an API with no Telemetry pays nothing per request).
func (t *Telemetry) Observer() apiserver.Observer {
	if t == nil {
		return nil
	}
	return t
}

// ObserveRequest counts an answered request and adds it to the request log.
func (t *Telemetry) ObserveRequest(e requestlog.Entry) {
	if t == nil {
		return
	}
	t.requests.WithLabelValues(e.API, e.Operation, statusLabel(e.Status)).Inc()
	t.latency.WithLabelValues(e.API, e.Operation).Observe(e.Latency.Seconds())
	if n := len(e.Violations); n > 0 {
		t.violations.WithLabelValues(e.API, e.Operation).Add(float64(n))
	}
	if t.log != nil {
		t.log.Add(e)
	}
}

// ObserveViolations counts the violations found in a response after it was
// sent, and adds them to its entry in the request log.
func (t *Telemetry) ObserveViolations(e requestlog.Entry) {
	if t == nil || len(e.Violations) == 0 {
		return
	}
	t.violations.WithLabelValues(e.API, e.Operation).Add(float64(len(e.Violations)))
	if t.log != nil {
		t.log.AddViolations(e.API, e.ID, e.Violations...)
	}
}

// statusLabels are the status label values of the usual statuses, made once.
var statusLabels = func() []string {
	labels := make([]string, 600)
	for i := range labels {
		labels[i] = strconv.Itoa(i)
	}
	return labels
}()

func statusLabel(status int) string {
	if status >= 0 && status < len(statusLabels) {
		return statusLabels[status]
	}
	return strconv.Itoa(status)
}

// RateLimited counts a request of api refused by one of its rate limits
// (Limit*).
func (t *Telemetry) RateLimited(api, limit string) {
	if t == nil {
		return
	}
	t.refusals.WithLabelValues(api, limit).Inc()
}

// DeliveryAttempt counts one fax webhook delivery attempt that ended in
// outcome (Outcome*).
func (t *Telemetry) DeliveryAttempt(outcome string) {
	if t == nil {
		return
	}
	t.attempts.WithLabelValues(outcome).Inc()
}

// SimulatorStep counts one committed step of the fax simulator, which left
// the fax in status.
func (t *Telemetry) SimulatorStep(status string) {
	if t == nil {
		return
	}
	t.steps.WithLabelValues(status).Inc()
}

// WatchOutbox sets the function the outbox depth gauge reads at each
// scrape (the fax store's count of pending events); the last one set wins.
func (t *Telemetry) WatchOutbox(depth func(context.Context) (int, error)) {
	if t == nil {
		return
	}
	t.outbox.Store(&depth)
}

func (t *Telemetry) outboxDepth() float64 {
	depth := t.outbox.Load()
	if depth == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), outboxTimeout)
	defer cancel()
	n, err := (*depth)(ctx)
	if err != nil {
		return math.NaN()
	}
	return float64(n)
}
