package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadiness(t *testing.T) {
	var pings atomic.Int32
	var dbErr atomic.Pointer[error]
	r := NewReadiness(func(context.Context) error {
		pings.Add(1)
		if p := dbErr.Load(); p != nil {
			return *p
		}
		return nil
	})
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := r.Wrap(next)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}

	code, body := get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "starting")
	assert.Zero(t, pings.Load(), "no ping before the start")

	r.Start()
	code, body = get("/readyz")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"status":"ready"}`, body)
	get("/readyz")
	assert.Equal(t, int32(1), pings.Load(), "a ping answers for a second")

	failure := errors.New("dial tcp: connection refused; password=secret")
	dbErr.Store(&failure)
	now = now.Add(time.Second)
	code, body = get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "database unavailable")
	assert.NotContains(t, body, "secret", "the database's error is not shown")
	assert.Equal(t, int32(2), pings.Load())

	dbErr.Store(nil)
	now = now.Add(1500 * time.Millisecond)
	code, _ = get("/readyz")
	assert.Equal(t, http.StatusOK, code, "ready again once the database answers")

	r.Drain()
	code, body = get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "shutting down")

	code, _ = get("/v1/anything")
	assert.Equal(t, http.StatusTeapot, code, "every other path reaches the API")
	code, _ = get("/readyz/x")
	require.Equal(t, http.StatusTeapot, code)
}
