package replicas

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// abs makes a Link target absolute for a client whose host is rewritten.
func abs(api, link string) string {
	if strings.HasPrefix(link, "/") {
		return "http://" + api + link
	}
	return link
}

// walkGroups lists every group of team through c, count per page, and
// returns the names in the order seen.
func walkGroups(t *testing.T, c *http.Client, team, token string, count int) []string {
	t.Helper()
	var names []string
	url := fmt.Sprintf("http://pam/v1/teams/%s/groups?count=%d", team, count)
	for url != "" {
		var page struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		}
		resp := mustCall(t, c, http.MethodGet, url, token, nil, http.StatusOK, &page)
		for _, g := range page.List {
			names = append(names, g.Name)
		}
		url = nextLink(resp.Header)
		if url != "" {
			url = abs("pam", url)
		}
	}
	return names
}

// createGroups creates n groups named prefix-0000… through c with workers
// at once.
func createGroups(t *testing.T, c *http.Client, team, token, prefix string, n, workers int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan string)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range next {
				resp, body, err := call(context.Background(), c, http.MethodPost, "http://pam/v1/teams/"+team+"/groups", token,
					map[string]any{"name": name, "roles": []string{"end_user"}})
				if err != nil {
					errs <- err
				} else if resp.StatusCode != http.StatusCreated {
					errs <- fmt.Errorf("create %s: %d %s", name, resp.StatusCode, body)
				}
			}
		}()
	}
	for _, name := range names {
		next <- name
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return names
}

// TestReplicas_PAM: tokens, writes and page tokens of one replica work on
// the others, and a paged walk whose pages come from different replicas
// sees every group once.
func TestReplicas_PAM(t *testing.T) {
	c := newCluster(t)
	rs := c.start(t, 3, "--pam-rate-limit", "1000000")
	admin := client("admin", rs...)
	team := newPAMTeam(t, admin, c.adminToken, "acme")

	t.Run("a token issued by replica 1 works on 2 and 3", func(t *testing.T) {
		token := pamToken(t, direct(rs[0], "pam"), team)
		for _, r := range rs[1:] {
			mustCall(t, direct(r, "pam"), http.MethodGet, "http://pam/v1/teams/acme/groups", token, nil, http.StatusOK, nil)
		}
	})

	t.Run("a group created on 2 is listed on 3", func(t *testing.T) {
		token := pamToken(t, direct(rs[0], "pam"), team)
		mustCall(t, direct(rs[1], "pam"), http.MethodPost, "http://pam/v1/teams/acme/groups", token,
			map[string]any{"name": "made-on-two", "roles": []string{"end_user"}}, http.StatusCreated, nil)
		assert.Contains(t, walkGroups(t, direct(rs[2], "pam"), "acme", token, 1000), "made-on-two")
	})

	t.Run("a paged walk of 1,000 groups across the replicas sees each once", func(t *testing.T) {
		rr := client("pam", rs...)
		token := pamToken(t, rr, team)
		created := createGroups(t, rr, "acme", token, "walk", 1000, 8)
		names := walkGroups(t, rr, "acme", token, 30) // 34 pages, each from the next replica
		seen := map[string]int{}
		for _, n := range names {
			seen[n]++
		}
		for _, n := range created {
			assert.Equal(t, 1, seen[n], "group %s", n)
		}
		assert.Len(t, names, len(seen), "no group twice")
		assert.Equal(t, 1002, len(seen), "the 1,000, the bot's group and made-on-two")
	})
}

// TestReplicas_PAMRateLimitIsGlobal: a limit of N per period admits exactly
// N requests of a caller across the three replicas, and every answer's
// X-RateLimit-Remaining follows from one shared bucket.
func TestReplicas_PAMRateLimitIsGlobal(t *testing.T) {
	const limit = 30
	c := newCluster(t)
	rs := c.start(t, 3, "--pam-rate-limit", strconv.Itoa(limit), "--pam-rate-period", "1h")
	admin := client("admin", rs...)

	// exchange spends the first request of the team's bot's bucket.
	exchange := func(t *testing.T, rr *http.Client, team pamTeam) string {
		var tok struct {
			BearerToken string `json:"bearer_token"`
		}
		resp := mustCall(t, rr, http.MethodPost, "http://pam/v1/teams/"+team.name+"/service_token", "",
			map[string]string{"key_id": team.keyID, "key_secret": team.keySecret}, http.StatusOK, &tok)
		assert.Equal(t, strconv.Itoa(limit), resp.Header.Get("X-RateLimit-Limit"))
		assert.Equal(t, strconv.Itoa(limit-1), resp.Header.Get("X-RateLimit-Remaining"))
		return tok.BearerToken
	}

	t.Run("one after another", func(t *testing.T) {
		team := newPAMTeam(t, admin, c.adminToken, "seq")
		rr := client("pam", rs...)
		token := exchange(t, rr, team)
		ok := 1
		for i := range limit + 15 {
			resp, body, err := call(context.Background(), rr, http.MethodGet, "http://pam/v1/teams/seq/groups", token, nil)
			require.NoError(t, err)
			assert.Equal(t, strconv.Itoa(limit), resp.Header.Get("X-RateLimit-Limit"), "request %d", i)
			if i < limit-1 {
				require.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, body)
				ok++
				assert.Equal(t, strconv.Itoa(limit-ok), resp.Header.Get("X-RateLimit-Remaining"), "request %d, replica %d", i, (i+1)%3)
				continue
			}
			require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "request %d: %s", i, body)
			assert.Equal(t, "0", resp.Header.Get("X-RateLimit-Remaining"), "request %d", i)
			assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Retry-At"), "request %d", i)
		}
		assert.Equal(t, limit, ok)
	})

	t.Run("all at once", func(t *testing.T) {
		team := newPAMTeam(t, admin, c.adminToken, "burst")
		rr := client("pam", rs...)
		token := exchange(t, rr, team)
		const sent = 2 * limit
		var mu sync.Mutex
		statuses := map[int]int{}
		remaining := map[string]int{}
		var wg sync.WaitGroup
		for range sent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, _, err := call(context.Background(), rr, http.MethodGet, "http://pam/v1/teams/burst/groups", token, nil)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				statuses[resp.StatusCode]++
				if resp.StatusCode == http.StatusOK {
					remaining[resp.Header.Get("X-RateLimit-Remaining")]++
				} else {
					assert.Equal(t, "0", resp.Header.Get("X-RateLimit-Remaining"))
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, map[int]int{http.StatusOK: limit - 1, http.StatusTooManyRequests: sent - limit + 1}, statuses,
			"exactly the limit succeeds across the replicas (the exchange took one)")
		for left := range limit - 1 {
			assert.Equal(t, 1, remaining[strconv.Itoa(left)], "one answer saw %d remaining", left)
		}
	})
}
