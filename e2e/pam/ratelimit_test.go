package pam_test

import (
	"context"
	"github.com/apistack/apistack/clients/pam"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pamserver "github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func TestGroups_CompletesA500ItemIterationUnderATinyRateLimitWithoutSendingBeforeRetryAt(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{Settings: pamserver.Settings{RateLimit: 4, RateLimitPeriod: time.Second}})
	env.Team(t, "acme")
	c := newTestClient(t, env, "acme", "pam_admin")
	env.Groups(t, "acme", "g", 499) // with bot-group, 500 groups

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := map[string]bool{}
	for g, err := range c.ListGroups(ctx, &pam.ListGroupsOptions{PageSize: 25}) {
		require.NoError(t, err)
		require.False(t, seen[g.Name], "%s seen twice", g.Name)
		seen[g.Name] = true
	}
	assert.Len(t, seen, 500)

	reqs := env.Requests()
	limited := 0
	for i, r := range reqs {
		if r.Status != http.StatusTooManyRequests {
			continue
		}
		limited++
		require.NotZero(t, r.RetryAt, "a 429 carries X-RateLimit-Retry-At")
		for _, next := range reqs[i+1:] {
			if next.Method == r.Method && next.Path == r.Path {
				assert.False(t, next.At.Before(time.Unix(r.RetryAt, 0)),
					"request at %s sent before Retry-At %s", next.At.Format(time.StampMilli), time.Unix(r.RetryAt, 0).Format(time.StampMilli))
				break
			}
		}
	}
	assert.Positive(t, limited, "the limit was hit, so the test proves the waiting")
}
