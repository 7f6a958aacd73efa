package apiserver_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/internal/validation"
)

// secretValue is put in a response that breaks the spec: no violation
// message may quote it.
const secretValue = "s3cr3t-value-in-a-bad-response"

// recorder is an apiserver.Observer keeping what it hears.
type recorder struct {
	mu       sync.Mutex
	requests []requestlog.Entry
	late     []requestlog.Entry
	heard    chan struct{}
}

func newRecorder() *recorder { return &recorder{heard: make(chan struct{}, 64)} }

func (r *recorder) ObserveRequest(e requestlog.Entry) {
	r.mu.Lock()
	r.requests = append(r.requests, e)
	r.mu.Unlock()
	r.heard <- struct{}{}
}

func (r *recorder) ObserveViolations(e requestlog.Entry) {
	r.mu.Lock()
	r.late = append(r.late, e)
	r.mu.Unlock()
}

// next waits for the next request observed.
func (r *recorder) next(t *testing.T) requestlog.Entry {
	t.Helper()
	select {
	case <-r.heard:
	case <-time.After(10 * time.Second):
		t.Fatal("no request observed")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[len(r.requests)-1]
}

func (r *recorder) lateFor(id uint64) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.late {
		if e.ID == id {
			out = append(out, e.Violations...)
		}
	}
	return out
}

// observed serves the admin spec with observer o: GetPAMTeam answers a team
// that breaks the schema (a string where a boolean belongs, created_at
// missing), ListStorageBuckets a valid empty list.
func observed(t *testing.T, o apiserver.Observer, background *validation.Background, hook func(*http.Request, int, error)) string {
	t.Helper()
	spec, err := adminserver.GetSpec()
	require.NoError(t, err)
	e, err := apiserver.New(apiserver.Config{
		Name:  "admin",
		Title: "admin",
		Validation: validation.Options{
			Spec:                spec,
			Authenticate:        bearerToken,
			ValidateResponses:   true,
			Background:          background,
			OnResponseViolation: hook,
		},
		ErrorHandler: func(err error, c echo.Context) {
			status := http.StatusInternalServerError
			var f *validation.Failure
			var he *echo.HTTPError
			if errors.As(err, &f) {
				status = map[validation.Kind]int{validation.KindUnauthenticated: 401, validation.KindNotFound: 404, validation.KindMethodNotAllowed: 405}[f.Kind]
			} else if errors.As(err, &he) {
				status = he.Code
			}
			_ = c.JSON(status, map[string]any{"code": status, "error": "invalid_request", "message": err.Error()})
		},
		// A rate limit refusing before the body gate has routed the request.
		Before: []echo.MiddlewareFunc{func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				if c.Request().Header.Get("Authorization") == "Bearer spent" {
					// As the spec has it: its answer is checked like any other.
					c.Response().Header().Set("Retry-After", "1")
					return echo.NewHTTPError(http.StatusTooManyRequests)
				}
				return next(c)
			}
		}},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Observer: o,
	})
	require.NoError(t, err)
	e.GET("/pam/teams/:team_name", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"id": "0b7a3c52-8d7e-4c69-9a0f-1f2e3d4c5b6a", "name": "demo", "disabled": secretValue})
	})
	e.GET("/storage/buckets", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]any{"buckets": []any{}})
	})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

func get(t *testing.T, url, auth string) int {
	t.Helper()
	resp, _ := testkit.Request{Method: http.MethodGet, URL: url, Token: auth}.Do(t)
	return resp.StatusCode
}

func TestObserve_EachRequestIsReportedWithItsOperationStatusLatencyAndViolations(t *testing.T) {
	o := newRecorder()
	var hooked []int
	var mu sync.Mutex
	url := observed(t, o, nil, func(_ *http.Request, status int, _ error) {
		mu.Lock()
		hooked = append(hooked, status)
		mu.Unlock()
	})

	before := time.Now()
	require.Equal(t, http.StatusOK, get(t, url+"/pam/teams/demo", token))
	e := o.next(t)
	assert.NotZero(t, e.ID)
	assert.Equal(t, "admin", e.API)
	assert.Equal(t, "GetPAMTeam", e.Operation, "the operationId of the spec")
	assert.Equal(t, http.MethodGet, e.Method)
	assert.Equal(t, "/pam/teams/demo", e.Path)
	assert.Equal(t, http.StatusOK, e.Status)
	assert.Positive(t, e.Latency)
	assert.False(t, e.Time.Before(before.Add(-time.Second)))
	require.NotEmpty(t, e.Violations, "strict mode: the violations are in the entry")
	joined := strings.Join(e.Violations, "\n")
	assert.Contains(t, joined, "disabled")
	assert.NotContains(t, joined, secretValue, "a violation never quotes the response's values")
	mu.Lock()
	assert.Equal(t, []int{http.StatusOK}, hooked, "the API's own hook still hears of the violation")
	mu.Unlock()

	tests := []struct {
		name, path, auth string
		status           int
		operation        string
	}{
		{"valid answer", "/storage/buckets", token, http.StatusOK, "ListStorageBuckets"},
		{"refused before the handler", "/storage/buckets", "wrong", http.StatusUnauthorized, "ListStorageBuckets"},
		{"refused before the body gate", "/storage/buckets", "spent", http.StatusTooManyRequests, "ListStorageBuckets"},
		{"refused before the body gate, no such operation", "/nowhere", "spent", http.StatusTooManyRequests, ""},
		{"no such operation", "/nowhere", token, http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.status, get(t, url+tt.path, tt.auth))
			e := o.next(t)
			assert.Equal(t, tt.status, e.Status)
			assert.Equal(t, tt.operation, e.Operation)
			assert.Equal(t, tt.path, e.Path)
			assert.Empty(t, e.Violations)
		})
	}

	// The endpoints every port serves are not API requests: not observed.
	for _, p := range []string{"/healthz", "/openapi.yaml", "/docs/", "/docs/openapi.yaml"} {
		require.Equal(t, http.StatusOK, get(t, url+p, ""), p)
	}
	require.Equal(t, http.StatusOK, get(t, url+"/storage/buckets", token))
	assert.Equal(t, "ListStorageBuckets", o.next(t).Operation, "the next request observed after the common endpoints")
	o.mu.Lock()
	assert.Len(t, o.requests, 7)
	assert.Empty(t, o.late)
	o.mu.Unlock()
}

func TestObserve_ViolationsFoundAfterTheResponseFollowTheirEntry(t *testing.T) {
	o := newRecorder()
	bg := validation.NewBackground(validation.BackgroundConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	url := observed(t, o, bg, nil)

	require.Equal(t, http.StatusOK, get(t, url+"/pam/teams/demo", token))
	e := o.next(t)
	bg.Wait()
	// The check runs after the response is sent: it may finish before the
	// entry is made (then its violations are in it) or after (then they
	// follow, under the entry's ID). Either way each is reported once.
	all := append(append([]string(nil), e.Violations...), o.lateFor(e.ID)...)
	require.NotEmpty(t, all)
	assert.Contains(t, strings.Join(all, "\n"), "disabled")
	assert.NotContains(t, strings.Join(all, "\n"), secretValue)
	assert.Equal(t, int64(1), bg.Stats().Checked)
}
