package validation

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"golang.org/x/time/rate"
)

// BackgroundConfig tunes Background; the zero value is the defaults.
type BackgroundConfig struct {
	// Workers bounds the checks running at once; 0 means half the CPUs, at
	// least one.
	Workers int
	// FirstPerPair responses of each (operation, status) are always checked,
	// waiting for a worker when every one is busy; 0 means 10.
	FirstPerPair int
	// SamplePerSecond more responses a second are checked when every worker
	// is busy or the CPU budget is spent (waiting for a worker); the rest are
	// skipped and counted. 0 means 20.
	SamplePerSecond float64
	// CPUShare is the share of the machine's CPU time the checks beyond the
	// first of each pair and the sample may take; 0 means 0.05. A check costs
	// about as much as producing the response, so checking every response of
	// a loaded server would halve its throughput: under load, the budget
	// decides how many are checked; an idle server checks every one.
	CPUShare float64
	// SummaryEvery is how often, at most, skipped checks are logged; 0 means
	// a minute.
	SummaryEvery time.Duration
	// Logger receives violations and the summaries of skipped checks; nil
	// means slog.Default().
	Logger *slog.Logger
}

// Background is the run-time mode of response validation (`apistack serve
// --validate-responses`): a response is sent first and checked afterwards
// on a bounded pool of workers, so the check adds nothing to the caller's
// wait. When every worker is busy, the first responses of each (operation,
// status) are still checked, then a rate-limited sample; the others are
// skipped, counted and logged in a summary. Tests use the strict mode
// instead (Options.Background nil): it checks every response before sending.
//
// One Background may serve every API of a process.
type Background struct {
	cfg     BackgroundConfig
	slots   chan struct{}
	sampler *rate.Limiter
	// budget holds the CPU time (in nanoseconds) checks may spend, refilled
	// at CPUShare of the machine; cost is the running average of a check's
	// duration, in nanoseconds.
	budget *rate.Limiter
	cost   atomic.Int64
	wg     sync.WaitGroup

	mu       sync.Mutex
	seen     map[pairKey]int
	lastLog  time.Time
	skipSent int64 // skipped as of the last summary

	checked atomic.Int64
	skipped atomic.Int64
}

type pairKey struct {
	op     *openapi3.Operation
	status int
}

// NewBackground returns a pool of background checks.
func NewBackground(cfg BackgroundConfig) *Background {
	if cfg.Workers <= 0 {
		cfg.Workers = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if cfg.FirstPerPair <= 0 {
		cfg.FirstPerPair = 10
	}
	if cfg.SamplePerSecond <= 0 {
		cfg.SamplePerSecond = 20
	}
	if cfg.SummaryEvery <= 0 {
		cfg.SummaryEvery = time.Minute
	}
	if cfg.CPUShare <= 0 {
		cfg.CPUShare = 0.05
	}
	perSecond := cfg.CPUShare * float64(runtime.GOMAXPROCS(0)) * float64(time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Background{
		cfg:     cfg,
		slots:   make(chan struct{}, cfg.Workers),
		sampler: rate.NewLimiter(rate.Limit(cfg.SamplePerSecond), max(1, int(cfg.SamplePerSecond))),
		// A tenth of a second's budget may be spent at once.
		budget:  rate.NewLimiter(rate.Limit(perSecond), int(perSecond/10)),
		seen:    map[pairKey]int{},
		lastLog: time.Now(),
	}
}

// BackgroundStats counts what a Background did.
type BackgroundStats struct {
	// Checked responses, by a free worker or as part of the sample.
	Checked int64
	// Skipped responses: every worker was busy or the CPU budget spent,
	// and they were not sampled.
	Skipped int64
}

// Stats returns the counts so far.
func (b *Background) Stats() BackgroundStats {
	return BackgroundStats{Checked: b.checked.Load(), Skipped: b.skipped.Load()}
}

// Wait returns once every check started so far has finished.
func (b *Background) Wait() { b.wg.Wait() }

// admit decides whether a response of the pair is checked, before anything
// is copied for the check: run it at once on a free worker (now), or wait
// for one (wait: the first of its pair, or the sample); neither means it is
// skipped, and counted.
func (b *Background) admit(route *routers.Route, status int) (now, wait bool) {
	first := b.mark(route, status) <= b.cfg.FirstPerPair
	if !first && b.affordable() {
		select {
		case b.slots <- struct{}{}:
			return true, false
		default:
		}
	}
	if first || b.sampler.Allow() {
		return false, true
	}
	b.skipped.Add(1)
	b.summarize()
	return false, false
}

// run runs an admitted check on a worker (holding a slot when now, taking
// one when it must wait).
func (b *Background) run(now bool, check func()) {
	b.wg.Add(1)
	go func() {
		if !now {
			b.slots <- struct{}{}
		}
		defer func() { <-b.slots; b.wg.Done() }()
		start := time.Now()
		check()
		b.observe(time.Since(start))
		b.checked.Add(1)
	}()
}

// affordable spends a check's average cost from the CPU budget, if the
// budget has it.
func (b *Background) affordable() bool {
	return b.budget.AllowN(time.Now(), int(b.cost.Load()))
}

// observe folds a check's duration into the running average cost (each new
// check weighs an eighth).
func (b *Background) observe(d time.Duration) {
	for {
		old := b.cost.Load()
		next := int64(d)
		if old > 0 {
			next = old + (int64(d)-old)/8
		}
		if b.cost.CompareAndSwap(old, next) {
			return
		}
	}
}

// mark counts one more response of the pair and returns its number.
func (b *Background) mark(route *routers.Route, status int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := pairKey{route.Operation, status}
	b.seen[k]++
	return b.seen[k]
}

// summarize logs how many checks were skipped since the last summary, at
// most once per SummaryEvery.
func (b *Background) summarize() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if now.Sub(b.lastLog) < b.cfg.SummaryEvery {
		return
	}
	skipped := b.skipped.Load()
	b.cfg.Logger.Warn("response validation skipped responses: every worker was busy or the CPU budget spent",
		"skipped", skipped-b.skipSent, "since", b.lastLog.UTC().Format(time.RFC3339),
		"checked_total", b.checked.Load(), "skipped_total", skipped, "workers", b.cfg.Workers)
	b.lastLog, b.skipSent = now, skipped
}

// checkLater copies what the check needs from a sent response and hands it
// to the pool, when the response is admitted.
func (b *Background) checkLater(req *http.Request, route *routers.Route, input *openapi3filter.RequestValidationInput,
	status int, header http.Header, body []byte, withBody, noBody *openapi3filter.Options,
	onViolation func(*http.Request, int, error)) {
	now, wait := b.admit(route, status)
	if !now && !wait {
		return
	}
	header = header.Clone()
	body = bytes.Clone(body) // the recorder's buffer goes back to its pool
	detached := req.WithContext(context.WithoutCancel(req.Context()))
	in := *input
	in.Request = detached
	b.run(now, func() {
		if _, err := checkResponse(detached, route, &in, status, header, body, withBody, noBody); err != nil {
			onViolation(detached, status, err)
		}
	})
}
