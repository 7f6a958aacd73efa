// Package sandbox_test proves the ergonomic clients against a sandbox of
// a running stack: what they make of the faults a sandbox injects (their
// typed errors, their retries honouring Retry-After). The sandbox server's
// own answers are tested in servers/sandbox, through the generated clients.
package sandbox_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/apistacktest"
	"github.com/apistack/apistack/clients"
	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/gen/sandboxapi"
)

// noRetry makes the ergonomic clients answer the first attempt's error.
var noRetry = clients.RetryPolicy{MaxRetries: -1}

// fastRetry retries soon, and waits at most 3s when told to.
var fastRetry = clients.RetryPolicy{MaxRetries: 3, MaxWait: 3 * time.Second, WaitMin: time.Millisecond, WaitMax: 10 * time.Millisecond}

// box is a sandbox created on a stack, with its own token's API.
type box struct {
	*sandboxapi.CreatedSandbox
	api   *sandboxapi.ClientWithResponses
	clock *apistacktest.Clock
}

// create starts a stack and creates a sandbox on it, as a test of a
// consumer's would with the stack's sandbox creator token.
func create(t *testing.T) *box {
	t.Helper()
	host := apistacktest.Start(t, apistacktest.Options{})
	creator := sandboxClient(t, host.AdminURL, host.SandboxCreatorToken())
	resp, err := creator.CreateSandboxWithResponse(context.Background(), sandboxapi.CreateSandboxRequest{})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode(), "%s", resp.Body)
	return &box{CreatedSandbox: resp.JSON201, api: sandboxClient(t, host.AdminURL, resp.JSON201.Token), clock: host.Clock}
}

func sandboxClient(t *testing.T, url, token string) *sandboxapi.ClientWithResponses {
	t.Helper()
	c, err := sandboxapi.NewClientWithResponses(url, sandboxapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	require.NoError(t, err)
	return c
}

// clientsOf are the ergonomic clients of every API on b's credentials.
type clientsOf struct {
	pam        *pam.Client
	fax        *faxclient.Client
	storage    *storage.Client
	restaurant *restaurant.Client
}

func (b *box) clients(t *testing.T, p clients.RetryPolicy) *clientsOf {
	t.Helper()
	c := b.Credentials
	out := &clientsOf{}
	var err error
	out.pam, err = pam.New(pam.Config{BaseURL: c.Pam.BaseUrl, Team: c.Pam.Team, KeyID: c.Pam.KeyId, KeySecret: c.Pam.KeySecret, Retry: p})
	require.NoError(t, err)
	out.fax, err = faxclient.New(faxclient.Config{BaseURL: c.Fax.BaseUrl, APIKey: c.Fax.ApiKey, Retry: p})
	require.NoError(t, err)
	out.storage, err = storage.New(storage.Config{Endpoint: c.Storage.Endpoint, Region: c.Storage.Region, KeyID: c.Storage.KeyId,
		Secret: c.Storage.Secret, Now: b.clock.Now, Retry: p})
	require.NoError(t, err)
	out.restaurant, err = restaurant.New(restaurant.Config{BaseURL: c.Restaurant.BaseUrl, ClientID: c.Restaurant.ClientId,
		ClientSecret: c.Restaurant.ClientSecret, Restaurant: c.Restaurant.RestaurantGuid, Retry: p})
	require.NoError(t, err)
	return out
}

// apiCall is one read of an API through its ergonomic client: the
// operation a fault names and the call.
type apiCall struct {
	api, operation string
	call           func(ctx context.Context, b *box, c *clientsOf) error
}

var apiCalls = []apiCall{
	{"pam", "ListGroups", func(ctx context.Context, _ *box, c *clientsOf) error {
		for _, err := range c.pam.ListGroups(ctx, nil) {
			if err != nil {
				return err
			}
		}
		return nil
	}},
	{"fax", "ListFaxes", func(ctx context.Context, _ *box, c *clientsOf) error {
		for _, err := range c.fax.ListFaxes(ctx, nil) {
			if err != nil {
				return err
			}
		}
		return nil
	}},
	{"storage", "GetLifecycle", func(ctx context.Context, b *box, c *clientsOf) error {
		_, err := c.storage.GetLifecycle(ctx, b.Credentials.Storage.Bucket)
		return err
	}},
	{"restaurant", "GetTipWithholding", func(ctx context.Context, _ *box, c *clientsOf) error {
		_, err := c.restaurant.GetTipWithholding(ctx)
		return err
	}},
}

// statusOf is the HTTP status of an ergonomic client's error (0: none; -1:
// no answer).
func statusOf(err error) int {
	var apiErr clients.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatus()
	}
	return -1
}

// errorBody checks the API's documented error of a fault's answer, as its
// client reads it.
func errorBody(t *testing.T, api string, status int, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, status, statusOf(err), "%s: %v", api, err)
	switch api {
	case "pam":
		var pe *pam.Error
		require.ErrorAs(t, err, &pe)
		want := map[int]pam.ErrorName{429: pam.TooManyRequests, 503: pam.ServiceOffline, 500: pam.UnknownError}[status]
		assert.Equal(t, want, pe.Name)
	case "fax":
		var fe *faxclient.Error
		require.ErrorAs(t, err, &fe)
		require.NotEmpty(t, fe.Items)
		assert.Equal(t, "internal_error", string(fe.Items[0].Code))
	case "storage":
		var se *storage.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, storage.ErrorCodeInternalError, se.Code)
		assert.NotEmpty(t, se.RequestID)
	case "restaurant":
		var re *restaurant.Error
		require.ErrorAs(t, err, &re)
		want := map[int]restaurant.ErrorKey{429: "RATE_LIMITED", 503: "INTERNAL_ERROR", 500: "INTERNAL_ERROR"}[status]
		assert.Equal(t, want, re.Key)
		assert.True(t, re.Retryable())
		if status == 429 {
			assert.Equal(t, time.Second, re.RetryAfter)
		}
	}
}

func addFault(t *testing.T, b *box, f sandboxapi.FaultRequest) sandboxapi.Fault {
	t.Helper()
	resp, err := b.api.AddSandboxFaultWithResponse(context.Background(), b.Id, f)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode(), "%s", resp.Body)
	return *resp.JSON201
}

func listFaults(t *testing.T, b *box) []sandboxapi.Fault {
	t.Helper()
	resp, err := b.api.ListSandboxFaultsWithResponse(context.Background(), b.Id)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode(), "%s", resp.Body)
	return resp.JSON200.Data
}

func clearFaults(t *testing.T, b *box) {
	t.Helper()
	resp, err := b.api.ClearSandboxFaultsWithResponse(context.Background(), b.Id)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, resp.StatusCode(), "%s", resp.Body)
}

func ptr[T any](v T) *T { return &v }

func apiOf(name string) *sandboxapi.FaultAPI { a := sandboxapi.FaultAPI(name); return &a }

// Each kind of fault, on each API, as the clients see it: the first
// answer's typed error, a retrying client coming through the rest (waiting
// as Retry-After says), a drop seen as no answer.
func TestFaults_EveryKindSeenThroughTheClients(t *testing.T) {
	b := create(t)
	ctx := context.Background()
	once, retrying := b.clients(t, noRetry), b.clients(t, fastRetry)
	require.NoError(t, once.storage.PutLifecycle(ctx, b.Credentials.Storage.Bucket,
		storage.Configuration(storage.ExpireAfterDays("tmp", "tmp/", 7))))
	for _, c := range apiCalls {
		t.Run(c.api, func(t *testing.T) {
			require.NoError(t, c.call(ctx, b, once), "no fault yet")
			for _, x := range []struct {
				kind   sandboxapi.FaultKind
				status int
			}{{sandboxapi.FaultKindRateLimited, 429}, {sandboxapi.FaultKindUnavailable, 503}, {sandboxapi.FaultKindInternalError, 500}} {
				// A new second of the restaurant API's real rate limit (20 a
				// second, on the stack's frozen clock).
				b.clock.Advance(time.Second)
				req := sandboxapi.FaultRequest{Kind: x.kind, Api: apiOf(c.api), Operation: &c.operation, Count: ptr(2)}
				if x.status != 500 {
					req.RetryAfter = ptr("1s")
				}
				addFault(t, b, req)
				// The first of the two: the client's typed error.
				errorBody(t, c.api, x.status, c.call(ctx, b, once))
				// The second: a retrying client comes through.
				start := time.Now()
				require.NoError(t, c.call(ctx, b, retrying), "%s %s: the client retries", c.api, x.kind)
				if x.status != 500 && c.api != "pam" {
					// It waited as Retry-After said (PAM's client waits for
					// X-RateLimit-Retry-At, dated by the stack's frozen clock).
					assert.GreaterOrEqual(t, time.Since(start), time.Second, "%s %s: Retry-After honoured", c.api, x.kind)
				}
				assert.Equal(t, 2, listFaults(t, b)[0].Taken, "%s %s", c.api, x.kind)
				clearFaults(t, b)
			}

			// drop: no answer, so no API error; a retrying client comes
			// through.
			addFault(t, b, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindDrop, Api: apiOf(c.api), Operation: &c.operation, Count: ptr(2)})
			err := c.call(ctx, b, once)
			require.Error(t, err)
			assert.Equal(t, -1, statusOf(err), "no answer, so no API error: %v", err)
			require.NoError(t, c.call(ctx, b, retrying))
			assert.Equal(t, 2, listFaults(t, b)[0].Taken)
			clearFaults(t, b)
		})
	}
}
