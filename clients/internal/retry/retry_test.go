package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients"
)

// fakeClock never sleeps: Sleep advances Now and records the wait.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	return nil
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// answer is one scripted answer: a status and its headers, computed from the
// fake clock's now when the request arrives.
type answer struct {
	status  int
	headers func(now time.Time) map[string]string
	hang    bool // block until the attempt's context ends
}

// scripted answers each request with the next answer of script (the last
// one repeats); the body says which attempt it answers.
func scripted(t *testing.T, clock *fakeClock, script ...answer) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		a := script[min(i, len(script)-1)]
		if a.hang {
			<-r.Context().Done()
			return
		}
		if a.headers != nil {
			for k, v := range a.headers(clock.Now()) {
				w.Header().Set(k, v)
			}
		}
		w.WriteHeader(a.status)
		fmt.Fprintf(w, "answer %d", i)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func status(s int) answer { return answer{status: s} }

func header(s int, k string, v func(now time.Time) string) answer {
	return answer{status: s, headers: func(now time.Time) map[string]string { return map[string]string{k: v(now)} }}
}

func get(t *testing.T, ctx context.Context, url string, o Options) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := HTTPClient(nil, o).Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b), nil
}

func TestRetry_ServerSaysWhen(t *testing.T) {
	unix := func(d time.Duration) func(time.Time) string {
		return func(now time.Time) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	}
	for _, tc := range []struct {
		name   string
		first  answer
		waited time.Duration
	}{
		{"503 Retry-After seconds", header(503, "Retry-After", func(time.Time) string { return "7" }), 7 * time.Second},
		{"429 Retry-After seconds", header(429, "Retry-After", func(time.Time) string { return "3" }), 3 * time.Second},
		{"429 Retry-After HTTP date", header(429, "Retry-After", func(now time.Time) string { return now.Add(12 * time.Second).UTC().Format(http.TimeFormat) }), 12 * time.Second},
		// Over 30 s away: the old client always failed this one.
		{"429 X-RateLimit-Retry-At 45s away", header(429, "X-RateLimit-Retry-At", unix(45*time.Second)), 45 * time.Second},
		{"429 X-RateLimit-Reset only", header(429, "X-RateLimit-Reset", unix(20*time.Second)), 20 * time.Second},
		{"429 X-RateLimit-Reset as seconds", header(429, "X-RateLimit-Reset", func(time.Time) string { return "9" }), 9 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			srv, n := scripted(t, clock, tc.first, status(200))
			resp, body, err := get(t, context.Background(), srv.URL, Options{Clock: clock, Jitter: -1})
			require.NoError(t, err)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, "answer 1", body)
			assert.Equal(t, int32(2), n.Load())
			require.Len(t, clock.Waits(), 1)
			// Unix-second headers are rounded down to the second.
			assert.InDelta(t, tc.waited.Seconds(), clock.Waits()[0].Seconds(), 1)
			attempts, stop, _ := Outcome(resp)
			assert.Equal(t, 2, attempts)
			assert.Empty(t, stop)
		})
	}
}

func TestRetry_503Then429SequenceSucceeds(t *testing.T) {
	clock := newFakeClock()
	srv, n := scripted(t, clock, status(503), status(503),
		header(429, "Retry-After", func(time.Time) string { return "2" }), status(502), status(200))
	resp, body, err := get(t, context.Background(), srv.URL, Options{Clock: clock, Jitter: -1,
		RetryPolicy: clients.RetryPolicy{WaitMin: 100 * time.Millisecond, WaitMax: time.Second}})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "answer 4", body)
	assert.Equal(t, int32(5), n.Load())
	w := clock.Waits()
	require.Len(t, w, 4)
	assert.Equal(t, 2*time.Second, w[2], "the 429's Retry-After")
	for _, i := range []int{0, 1, 3} {
		assert.GreaterOrEqual(t, w[i], 50*time.Millisecond, "backoff %d", i)
		assert.LessOrEqual(t, w[i], time.Second, "backoff %d", i)
	}
}

func TestRetry_ExhaustedReturnsTheLastAnswerAndWhy(t *testing.T) {
	clock := newFakeClock()
	srv, n := scripted(t, clock, status(503))
	resp, body, err := get(t, context.Background(), srv.URL, Options{Clock: clock, RetryPolicy: clients.RetryPolicy{MaxRetries: 3}})
	require.NoError(t, err)
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, "answer 3", body, "the last answer, body intact")
	assert.Equal(t, int32(4), n.Load())
	assert.Len(t, clock.Waits(), 3)
	attempts, stop, _ := Outcome(resp)
	assert.Equal(t, 4, attempts)
	assert.Equal(t, clients.RetriesExhausted, stop)

	apiErr := errors.New("503 service_offline: down for maintenance")
	var re *clients.RetryError
	require.ErrorAs(t, Wrap(resp, apiErr), &re)
	assert.Equal(t, 4, re.Attempts)
	assert.ErrorIs(t, re, apiErr)
}

func TestRetry_WaitLongerThanMaxWaitStopsAtOnce(t *testing.T) {
	clock := newFakeClock()
	srv, n := scripted(t, clock, header(429, "X-RateLimit-Retry-At", func(now time.Time) string {
		return strconv.FormatInt(now.Add(10*time.Minute).Unix(), 10)
	}))
	resp, _, err := get(t, context.Background(), srv.URL, Options{Clock: clock, RetryPolicy: clients.RetryPolicy{MaxWait: time.Minute}})
	require.NoError(t, err)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, int32(1), n.Load())
	assert.Empty(t, clock.Waits(), "no wait at all")
	_, stop, wait := Outcome(resp)
	assert.Equal(t, clients.WaitTooLong, stop)
	assert.InDelta(t, (10 * time.Minute).Seconds(), wait.Seconds(), 1)
}

func TestRetry_WaitPastTheDeadlineIsNotStarted(t *testing.T) {
	clock := newFakeClock()
	srv, n := scripted(t, clock, header(503, "Retry-After", func(time.Time) string { return "20" }))
	ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(10*time.Second))
	defer cancel()
	resp, _, err := get(t, ctx, srv.URL, Options{Clock: clock})
	require.NoError(t, err)
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, int32(1), n.Load())
	assert.Empty(t, clock.Waits())
	_, stop, wait := Outcome(resp)
	assert.Equal(t, clients.DeadlineTooSoon, stop)
	assert.GreaterOrEqual(t, wait, 20*time.Second)
}

// The case: a short per-attempt timeout must not cut the retries.
func TestRetry_AttemptTimeoutIsPerAttempt(t *testing.T) {
	clock := newFakeClock()
	srv, n := scripted(t, clock, status(503), answer{hang: true}, status(503), status(200))
	resp, body, err := get(t, context.Background(), srv.URL, Options{Clock: clock,
		RetryPolicy: clients.RetryPolicy{AttemptTimeout: 300 * time.Millisecond}})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "answer 3", body)
	assert.Equal(t, int32(4), n.Load())
	assert.Len(t, clock.Waits(), 3, "the hung attempt was retried like a connection error")
}

func TestRetry_NotRetried(t *testing.T) {
	for _, s := range []int{200, 400, 401, 404, 409, 501} {
		t.Run(strconv.Itoa(s), func(t *testing.T) {
			clock := newFakeClock()
			srv, n := scripted(t, clock, status(s), status(200))
			resp, _, err := get(t, context.Background(), srv.URL, Options{Clock: clock})
			require.NoError(t, err)
			assert.Equal(t, s, resp.StatusCode)
			assert.Equal(t, int32(1), n.Load())
			_, stop, _ := Outcome(resp)
			assert.Empty(t, stop)
		})
	}
}

func TestRetry_NoRetriesWhenNegative(t *testing.T) {
	clock := newFakeClock()
	srv, n := scripted(t, clock, status(503), status(200))
	resp, _, err := get(t, context.Background(), srv.URL, Options{Clock: clock, RetryPolicy: clients.RetryPolicy{MaxRetries: -1}})
	require.NoError(t, err)
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, int32(1), n.Load())
}

func TestRetry_ConnectionErrorsExhaustedAreATypedError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	clock := newFakeClock()
	_, _, err := get(t, context.Background(), url, Options{Clock: clock, RetryPolicy: clients.RetryPolicy{MaxRetries: 2}})
	var re *clients.RetryError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 3, re.Attempts)
	assert.Equal(t, clients.RetriesExhausted, re.Reason)
	assert.Len(t, clock.Waits(), 2)
}

func TestRetry_CancelledContextEndsTheCall(t *testing.T) {
	clock := newFakeClock()
	srv, _ := scripted(t, clock, status(503))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := get(t, ctx, srv.URL, Options{Clock: clock})
	require.ErrorIs(t, err, context.Canceled)
}

func TestRetry_RequestBodyIsResentOnEachAttempt(t *testing.T) {
	var bodies []string
	var mu sync.Mutex
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		if n.Add(1) < 3 {
			w.WriteHeader(503)
		}
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("payload"))
	require.NoError(t, err)
	resp, err := HTTPClient(nil, Options{Clock: newFakeClock()}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, []string{"payload", "payload", "payload"}, bodies)
}
