package replicas

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// deployConfig is the HAProxy configuration of deploy/compose.yaml.
const deployConfig = "../../../../deploy/haproxy.cfg"

// portAPI is the API of each port of deploy/haproxy.cfg.
var portAPI = map[string]string{"8081": "pam", "8082": "fax", "8083": "storage", "8084": "restaurant", "8089": "admin"}

// haproxy is Debian's haproxy running deploy/haproxy.cfg in front of
// replicas, the config's host names and ports replaced by the test's.
type haproxy struct {
	front  *replica // the frontends' addresses, shaped as a replica for client()
	socket string   // the admin socket (show stat)
	cmd    *exec.Cmd
	output *safebuf.Buffer
}

var (
	serverLine = regexp.MustCompile(`(?m)^(\s*server\s+replica([123])\s+)replica[123]:(\d+)`)
	bindLine   = regexp.MustCompile(`(?m)^(\s*bind\s+):(\d+)\s*$`)
)

// startHAProxy runs deploy/haproxy.cfg with replicas[i] as replica<i+1> and
// every frontend on a free loopback port, and waits until it sees every
// replica up.
func startHAProxy(t *testing.T, replicas []*replica) *haproxy {
	t.Helper()
	bin := testkit.Tools(t, "haproxy")[0] // .ci/run installs Debian's haproxy
	require.Len(t, replicas, 3, "deploy/haproxy.cfg names three replicas")
	data, err := os.ReadFile(deployConfig)
	require.NoError(t, err)
	cfg := string(data)
	dir := t.TempDir()
	h := &haproxy{front: &replica{addr: map[string]string{}}, socket: filepath.Join(dir, "admin.sock"), output: &safebuf.Buffer{}}

	servers := 0
	cfg = serverLine.ReplaceAllStringFunc(cfg, func(line string) string {
		m := serverLine.FindStringSubmatch(line)
		api := portAPI[m[3]]
		require.NotEmpty(t, api, "port %s of %q", m[3], line)
		servers++
		return m[1] + replicas[m[2][0]-'1'].addr[api]
	})
	require.Equal(t, 3*len(apis), servers, "a server line per replica and API")
	fronts := freePorts(t, len(apis))
	binds := 0
	cfg = bindLine.ReplaceAllStringFunc(cfg, func(line string) string {
		m := bindLine.FindStringSubmatch(line)
		api := portAPI[m[2]]
		require.NotEmpty(t, api, "port %s of %q", m[2], line)
		h.front.addr[api] = fronts[binds]
		binds++
		return m[1] + h.front.addr[api]
	})
	require.Equal(t, len(apis), binds, "a frontend per API")
	// The admin socket, for the test to read each server's state.
	cfg = strings.Replace(cfg, "\nglobal\n", "\nglobal\n    stats socket "+h.socket+" level admin\n", 1)
	require.Contains(t, cfg, "stats socket")
	path := filepath.Join(dir, "haproxy.cfg")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))

	h.cmd = exec.Command(bin, "-db", "-f", path)
	h.cmd.Stdout, h.cmd.Stderr = h.output, h.output
	testkit.Start(t, h.cmd, testkit.Stop{}, "haproxy output", func() string { return tail(h.output.String(), 4000) })
	for i := range replicas {
		h.waitState(t, i, "UP")
	}
	return h
}

// states returns the state (UP, DOWN, …) of each replica's server in each
// backend (backend -> server -> state), from HAProxy's admin socket.
func (h *haproxy) states() (map[string]map[string]string, error) {
	conn, err := net.DialTimeout("unix", h.socket, time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "show stat\n"); err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bufio.NewReader(strings.NewReader(readAll(conn)))).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("show stat: no rows")
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[strings.TrimPrefix(name, "# ")] = i
	}
	out := map[string]map[string]string{}
	for _, row := range rows[1:] {
		if len(row) <= col["status"] || !strings.HasPrefix(row[col["svname"]], "replica") {
			continue
		}
		backend := row[col["pxname"]]
		if out[backend] == nil {
			out[backend] = map[string]string{}
		}
		out[backend][row[col["svname"]]] = strings.Fields(row[col["status"]] + " ")[0]
	}
	return out, nil
}

func readAll(r io.Reader) string {
	data, _ := io.ReadAll(r)
	return string(data)
}

// waitState waits until HAProxy reports replica i (0-based) in state (UP or
// DOWN) in each of the backends (every API's when none is named), and
// returns when it saw it.
func (h *haproxy) waitState(t *testing.T, i int, state string, backends ...string) time.Time {
	t.Helper()
	if len(backends) == 0 {
		backends = apis
	}
	name := fmt.Sprintf("replica%d", i+1)
	var last map[string]map[string]string
	require.Eventually(t, func() bool {
		s, err := h.states()
		last = s
		if err != nil {
			return false
		}
		for _, b := range backends {
			if s[b][name] != state {
				return false
			}
		}
		return true
	}, 60*time.Second, 20*time.Millisecond, "haproxy never saw %s %s in %v: %v", name, state, backends, &last)
	return time.Now()
}

// outcome is one request of the load: when it was sent and ended, and why
// it failed (empty when it succeeded).
type outcome struct {
	start, end time.Time
	failure    string
}

// load sends GET requests through HAProxy from workers at once until
// stopped (or a bound of time), recording every outcome.
type load struct {
	stop    chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex
	results []outcome
	sent    atomic.Int64
}

// startLoad lists the team's groups through c with workers at once, each
// request with token, for at most limit.
func startLoad(c *http.Client, team, token string, workers int, limit time.Duration) *load {
	l := &load{stop: make(chan struct{})}
	deadline := time.Now().Add(limit)
	for range workers {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for time.Now().Before(deadline) {
				select {
				case <-l.stop:
					return
				default:
				}
				o := outcome{start: time.Now()}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				resp, body, err := call(ctx, c, http.MethodGet, "http://pam/v1/teams/"+team+"/groups?count=5", token, nil)
				cancel()
				o.end = time.Now()
				switch {
				case err != nil:
					o.failure = err.Error()
				case resp.StatusCode != http.StatusOK:
					o.failure = fmt.Sprintf("%d %s", resp.StatusCode, tail(string(body), 200))
				}
				l.sent.Add(1)
				l.mu.Lock()
				l.results = append(l.results, o)
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// waitSent waits until n more requests than at the call were sent.
func (l *load) waitSent(t *testing.T, n int64) {
	t.Helper()
	from := l.sent.Load()
	require.Eventually(t, func() bool { return l.sent.Load() >= from+n }, 60*time.Second, 5*time.Millisecond,
		"the load made no progress")
}

// finish stops the load and returns every outcome and the failed ones.
func (l *load) finish() (all, failed []outcome) {
	close(l.stop)
	l.done.Wait()
	for _, o := range l.results {
		if o.failure != "" {
			failed = append(failed, o)
		}
	}
	return l.results, failed
}

// replicaOf is the replica that answered through HAProxy (the header
// deploy/haproxy.cfg sets).
func replicaOf(resp *http.Response) string { return resp.Header.Get("X-Apistack-Replica") }

// TestHAProxy_ThreeReplicasAsOneService runs the topology of
// deploy/compose.yaml without a container engine: Debian's haproxy with
// deploy/haproxy.cfg in front of three `apistack serve` processes on one
// throwaway PostgreSQL database, under continuous load through HAProxy:
//   - a rolling restart (SIGTERM, --shutdown-drain, /readyz, HAProxy's
//     checks) of the three replicas one after another fails no request;
//   - a replica killed with SIGKILL fails at most the requests in flight on
//     it when it died, and none after HAProxy marks it down;
//   - a token, a page token and a rate limit behave as one service.
func TestHAProxy_ThreeReplicasAsOneService(t *testing.T) {
	testkit.Tools(t, "haproxy")
	outer := t
	c := newCluster(t)
	flags := []string{"--shutdown-drain", "3s", "--pam-rate-limit", "100000000",
		"--restaurant-rate-limit", "30", "--restaurant-rate-period", "1h", "--restaurant-rate-per-second", "100000"}
	rs := c.start(t, 3, flags...)
	h := startHAProxy(t, rs)
	lb := func(api string) *http.Client { return client(api, h.front) }
	team := newPAMTeam(t, lb("admin"), c.adminToken, "through-haproxy")
	token := pamToken(t, lb("pam"), team)
	const workers = 8
	// A replica started again lives as long as the whole test, not the
	// subtest that restarted it.
	relaunch := func(t *testing.T, i int) {
		rs[i] = c.launchAt(outer, rs[i].addr, flags...)
		rs[i].waitReady(t, false)
		h.waitState(t, i, "UP")
	}

	t.Run("rolling restart fails no request", func(t *testing.T) {
		l := startLoad(lb("pam"), team.name, token, workers, 3*time.Minute)
		l.waitSent(t, 200)
		for i := range rs {
			rs[i].stop() // SIGTERM: /readyz 503 for the drain, then the ports close
			relaunch(t, i)
			l.waitSent(t, 200) // served by the three again before the next one goes
		}
		all, failed := l.finish()
		t.Logf("rolling restart of 3 replicas: %d requests through HAProxy, %d failed", len(all), len(failed))
		for _, o := range failed {
			t.Errorf("failed request sent at %s: %s", o.start.Format(time.StampMicro), o.failure)
		}
	})

	t.Run("a replica killed fails only its requests in flight", func(t *testing.T) {
		l := startLoad(lb("pam"), team.name, token, workers, 3*time.Minute)
		l.waitSent(t, 200)
		// A request is in flight on the replica from when HAProxy connects
		// to it until it answers: one the kernel accepted for the process
		// between the signal and its death is in flight too. So the
		// failures are judged against the death (the process reaped).
		rs[1].kill()
		died := time.Now()
		down := h.waitState(t, 1, "DOWN", "pam") // the backend of the load
		l.waitSent(t, 300)                       // well after HAProxy marked it down
		all, failed := l.finish()
		t.Logf("SIGKILL of 1 of 3 replicas: %d requests through HAProxy, %d failed (marked down %s after it died)",
			len(all), len(failed), down.Sub(died).Round(time.Millisecond))
		assert.LessOrEqual(t, len(failed), workers, "at most one request in flight per worker")
		for _, o := range failed {
			t.Logf("failed: sent %s before the replica died: %s", died.Sub(o.start).Round(time.Microsecond), tail(o.failure, 80))
			assert.True(t, o.start.Before(died), "a request sent %s after the replica died failed: %s", o.start.Sub(died), o.failure)
			assert.True(t, o.start.Before(down), "a request sent after HAProxy marked the replica down failed: %s", o.failure)
		}
		relaunch(t, 1)
	})

	t.Run("a token, a page token and a rate limit are one service's", func(t *testing.T) {
		pam, restaurant, admin := lb("pam"), lb("restaurant"), lb("admin")
		// A token issued by one replica works on every one.
		fresh := pamToken(t, pam, team)
		served := map[string]bool{}
		for range 6 {
			resp := mustCall(t, pam, http.MethodGet, "http://pam/v1/teams/"+team.name+"/current_user", fresh, nil, http.StatusOK, nil)
			served[replicaOf(resp)] = true
		}
		assert.Len(t, served, 3, "the token worked on every replica: %v", served)

		// A paged walk whose page tokens each replica signs and reads.
		restaurantClient := func(guid, name string, items int) (clientID, secret string) {
			mustCall(t, admin, http.MethodPost, "http://admin/restaurant/restaurants", c.adminToken,
				map[string]any{"name": name, "guid": guid}, http.StatusCreated, nil)
			if items > 0 {
				mustCall(t, admin, http.MethodPost, "http://admin/restaurant/restaurants/"+guid+"/demo", c.adminToken,
					map[string]any{"menuItems": items, "seed": 3}, http.StatusOK, nil)
			}
			var creds struct {
				ClientID     string `json:"clientId"`
				ClientSecret string `json:"clientSecret"`
			}
			mustCall(t, admin, http.MethodPost, "http://admin/restaurant/clients", c.adminToken,
				map[string]any{"name": name, "restaurants": []string{guid}}, http.StatusCreated, &creds)
			return creds.ClientID, creds.ClientSecret
		}
		login := func(id, secret string) string {
			var out struct {
				Token struct {
					AccessToken string `json:"accessToken"`
				} `json:"token"`
			}
			mustCall(t, restaurant, http.MethodPost, "http://restaurant/authentication/v1/authentication/login", "",
				map[string]string{"clientId": id, "clientSecret": secret, "userAccessType": "PLATFORM_MACHINE_CLIENT"}, http.StatusOK, &out)
			return out.Token.AccessToken
		}
		get := func(guid, bearer, u string) (*http.Response, []map[string]any) {
			resp, data := testkit.Request{Method: http.MethodGet, URL: u, Token: bearer, Client: restaurant,
				Header: []string{"Platform-Restaurant-External-ID", guid}}.Do(t)
			var items []map[string]any
			if resp.StatusCode == http.StatusOK {
				require.NoError(t, json.Unmarshal(data, &items))
			}
			return resp, items
		}
		const walkGUID = "7a1e2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
		walkToken := login(restaurantClient(walkGUID, "walked through haproxy", 50))
		seen, pages := map[string]int{}, map[string]bool{}
		next := ""
		for n := 0; ; n++ {
			require.Less(t, n, 20, "the walk ends")
			u := "http://restaurant/config/v2/menuItems?pageSize=8"
			if next != "" {
				u += "&pageToken=" + url.QueryEscape(next)
			}
			resp, items := get(walkGUID, walkToken, u)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			pages[replicaOf(resp)] = true
			for _, it := range items {
				seen[fmt.Sprint(it["guid"])]++
			}
			if next = resp.Header.Get("Platform-Next-Page-Token"); next == "" {
				break
			}
		}
		assert.Len(t, pages, 3, "pages came from every replica: %v", pages)
		assert.GreaterOrEqual(t, len(seen), 50, "every item")
		for guid, n := range seen {
			assert.Equal(t, 1, n, "item %s seen once", guid)
		}

		// One rate limit: 30 requests an hour for the restaurant, whichever
		// replica answers; the 31st is refused by all of them.
		const limitedGUID = "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b"
		limitedToken := login(restaurantClient(limitedGUID, "rate limited through haproxy", 0))
		allowed, refusedBy, allowedBy := 0, map[string]bool{}, map[string]bool{}
		for range 36 {
			resp, _ := get(limitedGUID, limitedToken, "http://restaurant/config/v2/menus")
			switch resp.StatusCode {
			case http.StatusOK:
				require.Empty(t, refusedBy, "no request allowed after the first refusal")
				allowed++
				allowedBy[replicaOf(resp)] = true
			case http.StatusTooManyRequests:
				assert.NotEmpty(t, resp.Header.Get("Retry-After"))
				refusedBy[replicaOf(resp)] = true
			default:
				t.Fatalf("menus: %d", resp.StatusCode)
			}
		}
		t.Logf("rate limit through HAProxy: %d allowed (by %d replicas), then refused by %d replicas", allowed, len(allowedBy), len(refusedBy))
		assert.Equal(t, 30, allowed, "the limit is the service's, not each replica's")
		assert.Len(t, allowedBy, 3)
		assert.Len(t, refusedBy, 3, "every replica refuses once the shared bucket is empty")
	})
}
