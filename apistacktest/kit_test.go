package apistacktest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/apistacktest"
	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
)

// sendFax sends the stack's sample document to to and returns the fax id.
func sendFax(t *testing.T, st *apistacktest.Stack, to string) string {
	t.Helper()
	f, err := st.Fax.SendFax(context.Background(), faxclient.SendFaxParams{ConnectionID: st.Credentials.Fax.ConnectionID,
		To: to, From: st.Credentials.Fax.From, MediaURL: st.SampleFaxURL})
	require.NoError(t, err)
	return f.ID.String()
}

func wait(t *testing.T, st *apistacktest.Stack, faxID, eventType string) faxclient.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := st.Inbox.Wait(ctx, faxID, eventType)
	require.NoError(t, err)
	return e
}

func typesOf(events []faxclient.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

func TestClock_AdvanceDrivesAFaxToDelivered(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	id := sendFax(t, st, "+13125550800")
	// The document is fetched at once; every later step waits for the clock.
	wait(t, st, id, "fax.media.processed")
	f, err := st.Fax.GetFax(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, "media.processed", string(f.Status), "time has not moved: the fax waits")

	st.Clock.Advance(10 * time.Minute)
	wait(t, st, id, "fax.delivered")
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started", "fax.delivered"}, typesOf(st.Inbox.EventsOf(id)))
}

func TestClock_AdvanceRetriesAFailedWebhook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	attempts := 0
	failed := make(chan struct{}, 10)
	receiver := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		attempts++
		n := attempts
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			failed <- struct{}{}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := startServer(t, receiver)
	st := apistacktest.Start(t, apistacktest.Options{FaxWebhookURL: srv})
	sendFax(t, st, "+13125550800")
	<-failed // the first delivery failed: its retry waits for the clock
	mu.Lock()
	assert.Equal(t, 1, attempts)
	mu.Unlock()
	st.Clock.Advance(time.Minute)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return attempts >= 2 }, 10*time.Second, time.Millisecond)
}

func TestClock_AdvanceExpiresAPAMToken(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{Settings: apistacktest.Settings{PAM: apistacktest.PAMSettings{TokenTTL: time.Hour}}})
	ctx := context.Background()
	token, err := st.PAM.Token(ctx)
	require.NoError(t, err)
	currentUser := func() int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.PAMURL+"/v1/teams/"+st.Credentials.PAM.Team+"/current_user", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, currentUser())
	st.Clock.Advance(time.Hour + time.Second)
	assert.Equal(t, http.StatusUnauthorized, currentUser(), "the token expired in the stack's time")
	// The client exchanges its key again on the 401.
	_, err = st.PAM.GetCurrentUser(ctx)
	require.NoError(t, err)
}

func TestClock_AdvanceRefillsTheRateLimit(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{Settings: apistacktest.Settings{PAM: apistacktest.PAMSettings{RateLimit: 3, RateLimitPeriod: time.Hour, TokenTTL: 24 * time.Hour}}})
	ctx := context.Background()
	token, err := st.PAM.Token(ctx) // one request of the team's budget
	require.NoError(t, err)
	get := func() int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.PAMURL+"/v1/teams/"+st.Credentials.PAM.Team+"/groups", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	statuses := []int{get(), get(), get(), get()}
	assert.Contains(t, statuses, http.StatusTooManyRequests)
	st.Clock.Advance(time.Hour)
	assert.Equal(t, http.StatusOK, get(), "a period later the bucket is full again")
}

func startServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Second}
	ln := mustListen(t)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestFaults_PAMRateLimitedIsRetriedAfterXRateLimitRetryAt(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.RateLimited, Operation: "ListGroups", Count: 1, RetryAfter: 2 * time.Second})
	// X-RateLimit-Retry-At is in the stack's time (which stands still here),
	// in whole seconds.
	retryAt := time.Unix(st.Clock.Now().Add(2*time.Second).Unix(), 0)
	for _, err := range st.PAM.ListGroups(context.Background(), nil) {
		require.NoError(t, err)
	}
	assert.Equal(t, 1, st.Injected(apistacktest.PAM, apistacktest.RateLimited))
	assert.False(t, time.Now().Before(retryAt), "the client waited for X-RateLimit-Retry-At")
}

func TestFaults_RestaurantRateLimitedIsRetriedAfterRetryAfter(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	st.SeedMenu(t, 3, 1)
	st.Inject(t, apistacktest.Restaurant, apistacktest.Fault{Kind: apistacktest.RateLimited, Operation: "ListMenuItems", Count: 1, RetryAfter: time.Second})
	start := time.Now()
	n := 0
	for _, err := range st.Restaurant.ListMenuItems(context.Background(), nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 3, n)
	assert.Equal(t, 1, st.Injected(apistacktest.Restaurant, apistacktest.RateLimited))
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "the client waited for Retry-After")
}

func TestFaults_ErrorsReachTheClientsInTheirDocumentedShape(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	ctx := context.Background()
	// The PAM cases: one GetGroup with a single retry, and the error it ends in.
	pamGetGroup := func() error {
		cfg := st.PAMConfig()
		cfg.Retry.MaxRetries = 1
		c, err := pam.New(cfg)
		require.NoError(t, err)
		_, err = c.GetGroup(ctx, "anything")
		return err
	}
	pamError := func(status int, name pam.ErrorName) func(*testing.T, error) {
		return func(t *testing.T, err error) {
			var apiErr *pam.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, status, apiErr.StatusCode)
			assert.Equal(t, name, apiErr.Name)
		}
	}
	tests := []struct {
		name  string
		api   string
		fault apistacktest.Fault
		call  func() error
		check func(t *testing.T, err error)
	}{
		{"pam 500 unknown_error", apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.InternalError, Operation: "GetGroup", Count: 2},
			pamGetGroup,
			pamError(http.StatusInternalServerError, pam.UnknownError)},
		{"pam 503 service_offline", apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.Unavailable, Operation: "GetGroup", Count: 2},
			pamGetGroup,
			pamError(http.StatusServiceUnavailable, pam.ServiceOffline)},
		{"fax 500 internal_error", apistacktest.Fax, apistacktest.Fault{Kind: apistacktest.InternalError, Operation: "GetFax", Count: 2},
			func() error {
				cfg := st.FaxConfig()
				cfg.Retry.MaxRetries = 1
				c, err := faxclient.New(cfg)
				require.NoError(t, err)
				_, err = c.GetFax(ctx, "6f1c1a7e-52a4-4c6e-9b9e-2f7b0d5b3c11")
				return err
			},
			func(t *testing.T, err error) {
				var apiErr *faxclient.Error
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
				require.NotEmpty(t, apiErr.Items)
				assert.Equal(t, "internal_error", string(apiErr.Items[0].Code))
			}},
		{"storage 500 InternalError", apistacktest.Storage, apistacktest.Fault{Kind: apistacktest.InternalError, Operation: "GetLifecycle", Count: 1},
			func() error {
				// The storage client retries a 500 too; without retries the
				// caller sees it.
				cfg := st.StorageConfig()
				cfg.Retry.MaxRetries = -1
				c, err := storage.New(cfg)
				require.NoError(t, err)
				_, err = c.GetLifecycle(ctx, st.Credentials.Storage.Bucket)
				return err
			},
			func(t *testing.T, err error) {
				var apiErr *storage.Error
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
				assert.Equal(t, storage.ErrorCodeInternalError, apiErr.Code)
				assert.NotEmpty(t, apiErr.RequestID)
			}},
		{"restaurant 500 INTERNAL_ERROR", apistacktest.Restaurant, apistacktest.Fault{Kind: apistacktest.InternalError, Operation: "GetTipWithholding", Count: 2},
			func() error {
				cfg := st.RestaurantConfig()
				cfg.Retry.MaxRetries = 1
				c, err := restaurant.New(cfg)
				require.NoError(t, err)
				_, err = c.GetTipWithholding(ctx)
				return err
			},
			func(t *testing.T, err error) {
				var apiErr *restaurant.Error
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
				assert.Equal(t, "INTERNAL_ERROR", string(apiErr.Key))
				assert.True(t, apiErr.CanRetry)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st.Inject(t, tt.api, tt.fault)
			tt.check(t, tt.call())
			st.ClearFaults()
		})
	}
}

func TestFaults_ASlowAnswerTimesTheAttemptOut(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	cfg := st.PAMConfig()
	cfg.Retry.AttemptTimeout = 200 * time.Millisecond
	c, err := pam.New(cfg)
	require.NoError(t, err)
	_, err = c.Token(context.Background()) // the exchange is not delayed
	require.NoError(t, err)

	// The attempt times out and the retry succeeds, well before the delay.
	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.Slow, Operation: "GetCurrentUser", Count: 1, Delay: 5 * time.Second})
	start := time.Now()
	_, err = c.GetCurrentUser(context.Background())
	require.NoError(t, err, "the timed-out attempt was retried")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, 1, st.Injected(apistacktest.PAM, apistacktest.Slow))

	// Without retries the caller sees the attempt's timeout.
	cfg.Retry.MaxRetries = -1
	once, err := pam.New(cfg)
	require.NoError(t, err)
	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.Slow, Operation: "GetCurrentUser", Count: 1, Delay: 5 * time.Second})
	start = time.Now()
	_, err = once.GetCurrentUser(context.Background())
	require.ErrorIs(t, err, context.DeadlineExceeded, "the attempt's timeout fired")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestFaults_ADroppedConnectionIsRetried(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.Drop, Operation: "GetCurrentUser", Count: 1})
	_, err := st.PAM.GetCurrentUser(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, st.Injected(apistacktest.PAM, apistacktest.Drop))

	// Without retries the caller sees the connection end.
	cfg := st.PAMConfig()
	cfg.Retry.MaxRetries = -1
	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.Drop, Operation: "GetCurrentUser"})
	c, err := pam.New(cfg)
	require.NoError(t, err)
	_, err = c.GetCurrentUser(context.Background())
	require.Error(t, err)
	var apiErr *pam.Error
	assert.False(t, errors.As(err, &apiErr), "no answer, so no API error: %v", err)
}

// TestFaults_NetHTTPResendsADroppedIdempotentRequest shows what the guides
// warn of: Go's net/http resends a GET once, on a new connection, when a
// kept-alive connection closes before any answer, so one Drop on such a
// request never reaches the caller; two do.
func TestFaults_NetHTTPResendsADroppedIdempotentRequest(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	token, err := st.PAM.Token(context.Background())
	require.NoError(t, err)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	get := func() (*http.Response, error) {
		req, err := http.NewRequest(http.MethodGet, st.PAMURL+"/v1/teams/"+st.PAM.Team()+"/current_user", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // read whole, the connection is kept alive
			resp.Body.Close()
		}
		return resp, err
	}
	resp, err := get() // leaves a kept-alive connection
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.Drop, Operation: "GetCurrentUser", Count: 1})
	resp, err = get()
	require.NoError(t, err, "the transport resent the request on a new connection")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, st.Injected(apistacktest.PAM, apistacktest.Drop), "the server did drop one")

	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.Drop, Operation: "GetCurrentUser", Count: 2})
	_, err = get()
	require.Error(t, err, "the resent request was dropped too")
	assert.Equal(t, 3, st.Injected(apistacktest.PAM, apistacktest.Drop))
}

func TestFaults_AShareOfRequests(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	require.Error(t, st.InjectErr(apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.InternalError, Operation: "NoSuchOperation"}))
	st.Inject(t, apistacktest.Storage, apistacktest.Fault{Kind: apistacktest.InternalError, Operation: "GetLifecycle", Share: 0.5})
	cfg := st.StorageConfig()
	cfg.Retry.MaxRetries = -1 // each failure reaches the caller
	c, err := storage.New(cfg)
	require.NoError(t, err)
	failed := 0
	for range 40 {
		_, err := c.GetLifecycle(context.Background(), st.Credentials.Storage.Bucket)
		var apiErr *storage.Error
		if errors.As(err, &apiErr) && apiErr.Code == "InternalError" {
			failed++
		}
	}
	assert.Equal(t, failed, st.Injected(apistacktest.Storage, apistacktest.InternalError))
	assert.Greater(t, failed, 0)
	assert.Less(t, failed, 40)
}

func TestWebhookFaults_DuplicatedAndReorderedDeliveries(t *testing.T) {
	t.Parallel()
	t.Run("duplicate", func(t *testing.T) {
		t.Parallel()
		st := apistacktest.Start(t, apistacktest.Options{})
		st.Webhooks().Duplicate(1)
		id := sendFax(t, st, "+13125550800")
		// Moving the clock by more than the receiver's tolerance while a
		// delivery is in flight makes it stale (and retried): let both
		// copies of the first one arrive first.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := st.Inbox.WaitN(ctx, id, "fax.queued", 2)
		require.NoError(t, err)
		st.Clock.Advance(10 * time.Minute)
		wait(t, st, id, "fax.delivered")
		events := st.Inbox.EventsOf(id)
		require.GreaterOrEqual(t, len(events), 5, "%v", typesOf(events))
		assert.Equal(t, events[0].ID, events[1].ID, "the first event came twice")
		assert.Equal(t, "fax.queued", events[1].Type)
	})
	t.Run("reorder", func(t *testing.T) {
		t.Parallel()
		st := apistacktest.Start(t, apistacktest.Options{})
		st.Webhooks().Reorder(1)
		id := sendFax(t, st, "+13125550800")
		// fax.queued is held back until fax.media.processed went out; both
		// are signed at the current time, which the receiver checks.
		wait(t, st, id, "fax.queued")
		st.Clock.Advance(10 * time.Minute)
		wait(t, st, id, "fax.delivered")
		types := typesOf(st.Inbox.EventsOf(id))
		require.GreaterOrEqual(t, len(types), 2)
		assert.Equal(t, []string{"fax.media.processed", "fax.queued"}, types[:2], "the first two came swapped")
	})
}

// recorder is a TB that records what a stack reports, for the tests that
// must see the kit fail a test.
type recorder struct {
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *recorder) finish() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

func TestContract_ARequestThatBreaksTheSpecFailsTheTest(t *testing.T) {
	t.Parallel()
	// The consumer's test, run against a recorder: it is expected to fail.
	consumer := &recorder{}
	st := apistacktest.Start(consumer, apistacktest.Options{})
	defer consumer.finish()
	ctx := context.Background()
	token, err := st.PAM.Token(ctx)
	require.NoError(t, err)
	for _, bad := range []struct{ method, path, body string }{
		{http.MethodGet, "/groups?count=5000", ""},
		{http.MethodPost, "/groups", `{"roles":["pam_admin"]}`},
	} {
		req, err := http.NewRequestWithContext(ctx, bad.method, st.PAMURL+"/v1/teams/"+st.Credentials.PAM.Team+bad.path, strings.NewReader(bad.body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	}
	failures := consumer.failures()
	t.Log(strings.Join(failures, "\n"))
	require.Len(t, failures, 2, "each request that broke the spec failed the consumer's test")
	assert.Contains(t, failures[0], "pam ListGroups (GET /v1/teams/demo/groups)")
	assert.Contains(t, failures[0], "query count")
	assert.Contains(t, failures[0], "1000", "the rule broken: the maximum")
	assert.Contains(t, failures[1], "pam CreateGroup (POST /v1/teams/demo/groups)")
	assert.Contains(t, failures[1], "name", "the field missing")

	// A test that means to send them says so.
	allowed := &recorder{}
	st2 := apistacktest.Start(allowed, apistacktest.Options{AllowInvalidRequests: true})
	defer allowed.finish()
	resp, err := http.Get(st2.PAMURL + "/v1/teams/demo/no-such-path")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Empty(t, allowed.failures())
	require.Len(t, st2.Violations(), 1)
	assert.Contains(t, st2.Violations()[0].Error(), "(no operation)")

	// Well-formed traffic fails nothing.
	assert.Empty(t, st.Violations()[2:])
}
