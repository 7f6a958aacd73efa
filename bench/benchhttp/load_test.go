package benchhttp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoad_CountsAnswersErrorsAndLatencies(t *testing.T) {
	var inFlight, maxInFlight atomic.Int64
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		dup := seen[r.URL.Path]
		seen[r.URL.Path] = true
		mu.Unlock()
		if dup {
			w.WriteHeader(http.StatusConflict) // a request built twice
			return
		}
		if r.Header.Get("X-Fail") != "" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()

	load := Load{
		Connections: 4, Warmup: 50 * time.Millisecond, Duration: 200 * time.Millisecond,
		Request: func(ctx context.Context, worker, seq int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/%d/%d", srv.URL, worker, seq), nil)
			if err == nil && seq%4 == 3 {
				req.Header.Set("X-Fail", strconv.Itoa(seq))
			}
			return req, err
		},
	}
	res, err := load.Run(context.Background())
	require.NoError(t, err)

	require.Positive(t, res.Requests)
	assert.Zero(t, res.Statuses[http.StatusConflict], "every request is built anew, per worker and sequence number")
	assert.Equal(t, res.Requests, res.Statuses[http.StatusOK]+res.Statuses[http.StatusInternalServerError])
	assert.Equal(t, res.Statuses[http.StatusInternalServerError], res.Errors, "a non-2xx answer is an error")
	assert.Positive(t, res.Errors)
	assert.Less(t, res.Errors, res.Requests)
	assert.Equal(t, "status 500", res.FirstError)
	assert.Equal(t, res.Requests, res.Latency.Count(), "every measured request has its latency")
	assert.LessOrEqual(t, maxInFlight.Load(), int64(4), "never more requests in flight than connections")
	assert.Greater(t, res.Elapsed, 100*time.Millisecond, "the measured part lasts about its duration")
	assert.Less(t, res.Elapsed, 2*time.Second)
	assert.InEpsilon(t, float64(res.Requests)/res.Elapsed.Seconds(), res.RPS(), 1e-9)
}

func TestLoad_CountsTransportFailuresAsErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close() // nothing listens there any more
	res, err := Load{Connections: 2, Duration: 100 * time.Millisecond,
		Request: func(ctx context.Context, _, _ int) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		}}.Run(context.Background())
	require.NoError(t, err)
	require.Positive(t, res.Requests)
	assert.Equal(t, res.Requests, res.Errors)
	assert.Equal(t, res.Requests, res.Statuses[0], "a transport failure is status 0")
	assert.Contains(t, res.FirstError, "connect")
}

func TestLoad_RefusesABadConfiguration(t *testing.T) {
	fn := func(ctx context.Context, _, _ int) (*http.Request, error) { return nil, nil }
	_, err := Load{Connections: 0, Duration: time.Second, Request: fn}.Run(context.Background())
	assert.ErrorContains(t, err, "connections")
	_, err = Load{Connections: 1, Duration: 0, Request: fn}.Run(context.Background())
	assert.ErrorContains(t, err, "duration")
}

func TestLoad_StopsWhenTheContextEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Load{Connections: 2, Duration: time.Hour,
			Request: func(ctx context.Context, _, _ int) (*http.Request, error) {
				return http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			}}.Run(ctx)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the load did not stop with its context")
	}
}
