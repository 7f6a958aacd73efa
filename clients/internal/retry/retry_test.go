package retry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scripted answers each request with the next status of script (the last
// one repeats), setting header on 429s.
func scripted(t *testing.T, header func() (string, string), script ...int) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := int(n.Add(1)) - 1
		status := script[min(i, len(script)-1)]
		if status == http.StatusTooManyRequests && header != nil {
			k, v := header()
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", i)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestTransport_WaitsUntilTheServerSaysThenSucceeds(t *testing.T) {
	retryAt := time.Now().Add(300 * time.Millisecond).Truncate(time.Millisecond)
	srv, n := scripted(t, func() (string, string) {
		return "X-Retry-At-Ms", fmt.Sprint(retryAt.UnixMilli())
	}, 429, 200)
	rt := Transport(http.DefaultTransport, Policy{
		Jitter: time.Millisecond,
		RetryAt: func(resp *http.Response) (time.Time, bool) {
			var ms int64
			_, err := fmt.Sscan(resp.Header.Get("X-Retry-At-Ms"), &ms)
			return time.UnixMilli(ms), err == nil
		},
	})
	resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, int32(2), n.Load())
	assert.False(t, time.Now().Before(retryAt), "the retry was not sent before the server's instant")
}

func TestTransport_RetriesServerErrorsThenReturnsTheLastAnswer(t *testing.T) {
	for _, status := range []int{500, 502, 503, 504} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv, n := scripted(t, nil, status)
			rt := Transport(http.DefaultTransport, Policy{MaxRetries: 3, WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond})
			resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
			require.NoError(t, err, "the final error answer reaches the caller")
			resp.Body.Close()
			assert.Equal(t, status, resp.StatusCode)
			assert.Equal(t, int32(4), n.Load(), "one attempt and three retries")
		})
	}
}

func TestTransport_DoesNotRetryClientErrors(t *testing.T) {
	srv, n := scripted(t, nil, 400)
	rt := Transport(http.DefaultTransport, Policy{WaitMin: time.Millisecond})
	resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, int32(1), n.Load())
}

func TestTransport_WaitEndsWithTheContext(t *testing.T) {
	srv, _ := scripted(t, func() (string, string) { return "Retry-After", "3600" }, 429)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	start := time.Now()
	_, err := (&http.Client{Transport: Transport(http.DefaultTransport, Policy{})}).Do(req)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestUnixHeader(t *testing.T) {
	read := UnixHeader("X-RateLimit-Retry-At")
	at, ok := read(&http.Response{Header: http.Header{"X-Ratelimit-Retry-At": {"1700000000"}}})
	assert.True(t, ok)
	assert.Equal(t, time.Unix(1700000000, 0), at)
	_, ok = read(&http.Response{Header: http.Header{}})
	assert.False(t, ok)
}
