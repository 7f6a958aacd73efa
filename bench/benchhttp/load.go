package benchhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// RequestFunc builds one request. It is called for every request a worker
// sends (worker is the worker's number, seq counts its requests from 0), so a
// write path can use unique names and a signed request its own signature.
type RequestFunc func(ctx context.Context, worker, seq int) (*http.Request, error)

// Load is one closed-loop load run: Connections workers, each on its own
// keep-alive connection, send a request, read the whole answer, and send the
// next, for Warmup and then Duration; only requests started in the measured
// part are counted.
type Load struct {
	// Connections is the number of workers and connections.
	Connections int
	// Warmup runs the load unmeasured before Duration.
	Warmup time.Duration
	// Duration is the measured part.
	Duration time.Duration
	// Request builds each request.
	Request RequestFunc
	// Timeout bounds one request; 0 means 10 s.
	Timeout time.Duration
}

// LoadResult is what a Load measured.
type LoadResult struct {
	// Requests is the number of measured requests that completed (any status).
	Requests uint64
	// Errors counts the measured requests answered with a status outside
	// 2xx, and those that failed in transport.
	Errors uint64
	// Statuses counts the measured answers by status; 0 is a transport failure.
	Statuses map[int]uint64
	// FirstError describes the first failure seen, for the report.
	FirstError string
	// Elapsed is from the start of the measured part to the last counted
	// completion.
	Elapsed time.Duration
	// Latency holds the latency of every measured request.
	Latency *Histogram
}

// RPS returns the measured requests per second.
func (r LoadResult) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// newTransport returns a transport keeping exactly n connections alive to a
// host, as a load generator with n connections does.
func newTransport(n int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        n,
		MaxIdleConnsPerHost: n,
		MaxConnsPerHost:     n,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

type workerResult struct {
	requests, errors uint64
	statuses         map[int]uint64
	firstError       string
	last             time.Time
	latency          Histogram
}

// Run runs the load until its duration has passed or ctx ends.
func (l Load) Run(ctx context.Context) (LoadResult, error) {
	if l.Connections < 1 {
		return LoadResult{}, fmt.Errorf("load: connections must be at least 1, got %d", l.Connections)
	}
	if l.Duration <= 0 {
		return LoadResult{}, fmt.Errorf("load: duration must be positive, got %s", l.Duration)
	}
	timeout := l.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	transport := newTransport(l.Connections)
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	start := time.Now()
	measureFrom := start.Add(l.Warmup)
	end := measureFrom.Add(l.Duration)
	results := make([]*workerResult, l.Connections)
	var wg sync.WaitGroup
	for w := range l.Connections {
		res := &workerResult{statuses: map[int]uint64{}}
		results[w] = res
		wg.Go(func() { l.work(ctx, client, w, measureFrom, end, res) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return LoadResult{}, fmt.Errorf("load: %w", err)
	}

	out := LoadResult{Statuses: map[int]uint64{}, Latency: &Histogram{}}
	var last time.Time
	for _, r := range results {
		out.Requests += r.requests
		out.Errors += r.errors
		for s, c := range r.statuses {
			out.Statuses[s] += c
		}
		if out.FirstError == "" {
			out.FirstError = r.firstError
		}
		if r.last.After(last) {
			last = r.last
		}
		out.Latency.Merge(&r.latency)
	}
	if out.Requests > 0 {
		out.Elapsed = last.Sub(measureFrom)
	}
	return out, nil
}

// work is one worker's loop.
func (l Load) work(ctx context.Context, client *http.Client, worker int, measureFrom, end time.Time, res *workerResult) {
	for seq := 0; ctx.Err() == nil; seq++ {
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		status, err := l.once(ctx, client, worker, seq)
		t1 := time.Now()
		if t0.Before(measureFrom) {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		res.requests++
		res.last = t1
		res.latency.Record(t1.Sub(t0))
		res.statuses[status]++
		if err != nil || status < 200 || status > 299 {
			res.errors++
			if res.firstError == "" {
				if err != nil {
					res.firstError = err.Error()
				} else {
					res.firstError = fmt.Sprintf("status %d", status)
				}
			}
		}
	}
}

// once sends one request and reads its answer to the end; a transport
// failure answers status 0 and the error.
func (l Load) once(ctx context.Context, client *http.Client, worker, seq int) (int, error) {
	req, err := l.Request(ctx, worker, seq)
	if err != nil {
		return 0, fmt.Errorf("building the request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if err != nil && !errors.Is(err, context.Canceled) {
		return resp.StatusCode, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, nil
}
