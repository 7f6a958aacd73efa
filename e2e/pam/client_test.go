package pam_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/apistack/apistack/clients/pam"
	"net/http"
	"slices"
	"sync"

	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/contract"

	pamserver "github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// contractTransport fails the test on any request or response that breaks
// the PAM spec.
func contractTransport(t *testing.T) http.RoundTripper {
	t.Helper()
	rt, err := contract.ForAPI(contract.PAM, http.DefaultTransport,
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	return rt
}

func newTestClient(t *testing.T, env *pamtest.Env, team string, roles ...string) *pam.Client {
	t.Helper()
	key := env.ServiceUser(t, team, "bot", roles...)
	c, err := pam.New(pam.Config{BaseURL: env.URL, Team: team, KeyID: key.KeyID, KeySecret: key.KeySecret, Transport: contractTransport(t)})
	require.NoError(t, err)
	return c
}

func TestGroups_YieldsEveryGroupOnceInOrder(t *testing.T) {
	for _, n := range []int{0, 1, 99, 100, 101, 250} {
		env := pamtest.Start(t, pamtest.Options{})
		env.Team(t, "acme")
		c := newTestClient(t, env, "acme", "pam_admin")
		// The bot's own group is one of the groups: n-1 more make n in all
		// (n=0 lists with a filter that matches none of them).
		want := []string{"bot-group"}
		if n > 1 {
			want = append(want, env.Groups(t, "acme", "g", n-1)...)
		}
		slices.Sort(want)
		contains := ""
		if n == 0 {
			want, contains = nil, "no-such-group"
		}
		for _, count := range []int{0, 1, 7, 100} {
			t.Run(fmt.Sprintf("groups=%d/count=%d", n, count), func(t *testing.T) {
				var got []string
				for g, err := range c.ListGroups(context.Background(), &pam.ListGroupsOptions{PageSize: count, Contains: contains}) {
					require.NoError(t, err)
					got = append(got, g.Name)
				}
				assert.Equal(t, want, got)
			})
		}
	}
}

func TestGroups_StopsWhenTheCallerBreaks(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	c := newTestClient(t, env, "acme", "pam_admin")
	env.Groups(t, "acme", "g", 30)
	got := 0
	for _, err := range c.ListGroups(context.Background(), &pam.ListGroupsOptions{PageSize: 10}) {
		require.NoError(t, err)
		got++
		if got == 5 {
			break
		}
	}
	assert.Equal(t, 5, got)
	assert.Equal(t, 1, env.Count(http.MethodGet, "/v1/teams/acme/groups"), "breaking early fetches no more pages")
}

func TestGroups_YieldsTypedErrors(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	c := newTestClient(t, env, "acme") // no role: may not read the directory
	for _, err := range c.ListGroups(context.Background(), nil) {
		var apiErr *pam.Error
		require.True(t, errors.As(err, &apiErr), "%v", err)
		assert.Equal(t, http.StatusForbidden, apiErr.StatusCode)
		assert.Equal(t, pam.ForbiddenError, apiErr.Name)
		assert.NotEmpty(t, apiErr.Message)
		assert.ErrorIs(t, err, &pam.Error{Name: pam.ForbiddenError})
	}
}

func TestNew_WrongSecretIsAnAuthenticationError(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	c, err := pam.New(pam.Config{BaseURL: env.URL, Team: "acme", KeyID: key.KeyID, KeySecret: "wrong", Transport: contractTransport(t)})
	require.NoError(t, err)
	_, err = c.Token(context.Background())
	var apiErr *pam.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, pam.AuthenticationError, apiErr.Name)
	assert.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
}

func TestToken_ConcurrentCallersAfterExpiryShareOneRefresh(t *testing.T) {
	// The server and the client share one clock, so the token issued by the
	// refresh is fresh to the client too: a caller arriving after the
	// refresh ended must use it, not refresh again.
	fake := &sharedClock{now: time.Now()}
	env := pamtest.Start(t, pamtest.Options{Clock: fake, Settings: pamserver.Settings{TokenTTL: time.Hour}})
	env.Team(t, "acme")
	key := env.ServiceUser(t, "acme", "bot", "pam_admin")
	c, err := pam.New(pam.Config{BaseURL: env.URL, Team: "acme", KeyID: key.KeyID, KeySecret: key.KeySecret,
		Transport: contractTransport(t), Now: fake.Now})
	require.NoError(t, err)

	_, err = c.Token(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, env.Count(http.MethodPost, "/v1/teams/acme/service_token"))

	fake.Advance(2 * time.Hour) // the token has expired
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, err := range c.ListGroups(context.Background(), nil) {
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, 2, env.Count(http.MethodPost, "/v1/teams/acme/service_token"), "20 callers after expiry cause exactly one token request")
	assert.Equal(t, 20, env.Count(http.MethodGet, "/v1/teams/acme/groups"))
}

func TestToken_RefreshesOnceOn401(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{Settings: pamserver.Settings{TokenTTL: time.Hour}})
	env.Team(t, "acme")
	c := newTestClient(t, env, "acme", "pam_admin")
	_, err := c.Token(context.Background())
	require.NoError(t, err)
	// The server forgets every token (as after a revocation); the client
	// still believes its token valid, gets a 401, refreshes once and succeeds.
	require.NoError(t, env.Operator.RevokeTokens(context.Background(), "acme"))
	n := 0
	for _, err := range c.ListGroups(context.Background(), nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 1, n)
	assert.Equal(t, 2, env.Count(http.MethodPost, "/v1/teams/acme/service_token"))
}

// sharedClock is a clock a test moves by hand, shared by a server and a client.
type sharedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *sharedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *sharedClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
