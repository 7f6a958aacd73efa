// Package replicas tests `apistack serve` scaled out: real processes of the
// binary, several replicas on one PostgreSQL database (testdb.NewDatabase),
// a client that sends each request to the next replica in turn. PostgreSQL
// is required: under CI a missing one fails the run (testdb.PostgresURL).
package replicas

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// binary is the apistack binary built once for the run by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apistack-replicas-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "apistack")
	build := exec.Command("go", "build", "-o", binary, "github.com/apistack/apistack/servers/cmd/apistack")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build apistack:", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// apis are the ports of a replica, in the order of its flags.
var apis = []string{"pam", "restaurant", "fax", "storage", "admin"}

// replica is one `apistack serve` process.
type replica struct {
	proc    *testkit.Process
	addr    map[string]string // api -> host:port
	dataDir string
	stdout  *safebuf.Buffer
	stderr  *safebuf.Buffer
}

// cluster is the replicas of one database.
type cluster struct {
	url        string
	keyFile    string
	tokenFile  string
	adminToken string
	replicas   []*replica
}

// freePorts returns n loopback ports free at the time of the call. They are
// taken below the kernel's ephemeral range (32768 and up on Linux), so the
// replicas' own outgoing connections (to PostgreSQL, to the receiver)
// cannot take one before the replica listens on it.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var lns []net.Listener
	var addrs []string
	for len(addrs) < n {
		port := 20000 + mrand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken: try another
		}
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	for _, ln := range lns {
		_ = ln.Close()
	}
	return addrs
}

// newCluster makes a database, a master key and an admin token for
// replicas to share.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	c := &cluster{
		url:        testdb.NewDatabase(t),
		keyFile:    filepath.Join(dir, "master.key"),
		tokenFile:  filepath.Join(dir, "admin.token"),
		adminToken: "adm_" + rand.Text(),
	}
	require.NoError(t, os.WriteFile(c.keyFile, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600))
	require.NoError(t, os.WriteFile(c.tokenFile, []byte(c.adminToken+"\n"), 0o600))
	return c
}

// start starts n replicas at once with the extra flags and waits until
// every port of each answers /readyz 200.
func (c *cluster) start(t *testing.T, n int, extra ...string) []*replica {
	t.Helper()
	started := make([]*replica, 0, n)
	for range n {
		r := c.launch(t, extra...)
		started = append(started, r)
	}
	for i, r := range started {
		// A port picked free may be taken by another process before the
		// replica binds it: such a replica is started again on new ports.
		for attempt := 1; !r.waitReady(t, attempt < 3); attempt++ {
			r = c.launch(t, extra...)
			started[i] = r
		}
	}
	c.replicas = append(c.replicas, started...)
	return started
}

// launch starts one replica and returns without waiting for it.
func (c *cluster) launch(t *testing.T, extra ...string) *replica {
	t.Helper()
	ports := freePorts(t, len(apis))
	addr := map[string]string{}
	for i, api := range apis {
		addr[api] = ports[i]
	}
	return c.launchAt(t, addr, extra...)
}

// launchAt starts one replica on the given addresses (api -> host:port),
// as a replica restarted in place is, and returns without waiting for it.
func (c *cluster) launchAt(t *testing.T, addr map[string]string, extra ...string) *replica {
	t.Helper()
	r := &replica{addr: map[string]string{}, dataDir: t.TempDir(), stdout: &safebuf.Buffer{}, stderr: &safebuf.Buffer{}}
	args := []string{"serve", "--database", c.url, "--master-key-file", c.keyFile, "--admin-token-file", c.tokenFile,
		"--data-dir", r.dataDir, "--log-level", "warn", "--shutdown-timeout", "5s"}
	for _, api := range apis {
		r.addr[api] = addr[api]
		args = append(args, "--"+api+"-addr", addr[api])
	}
	args = append(args, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	r.proc = testkit.Start(t, cmd, testkit.Stop{Grace: 15 * time.Second}, fmt.Sprintf("replica %v stderr", r.addr["pam"]),
		func() string { return tail(r.stderr.String(), 4000) })
	return r
}

// cleanEnv is the test's environment without APISTACK_* variables, so a
// developer's settings do not reach the replicas.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "APISTACK_") {
			env = append(env, kv)
		}
	}
	return env
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitReady waits until every port of r answers /readyz with 200, and
// reports true. A replica that exits before is a failure of the test,
// unless it could not bind a port and mayRetry: then it reports false.
func (r *replica) waitReady(t *testing.T, mayRetry bool) bool {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for _, api := range apis {
		for {
			select {
			case <-r.proc.Exited():
				if mayRetry && strings.Contains(r.stderr.String(), "address already in use") {
					t.Logf("replica could not bind a port, starting it again: %s", tail(r.stderr.String(), 300))
					return false
				}
				t.Fatalf("replica exited before it was ready: %s", tail(r.stderr.String(), 4000))
			default:
			}
			resp, err := http.Get("http://" + r.addr[api] + "/readyz")
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %s not ready: %v %s", r.addr[api], err, tail(r.stderr.String(), 4000))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return true
}

// stop ends r gracefully (SIGTERM), or kills it after 15 s.
func (r *replica) stop() { r.proc.End() }

// kill ends r at once (SIGKILL), as a crash would.
func (r *replica) kill() { r.proc.Kill() }

// roundRobin sends each request to the next replica's port of one API: the
// request's host is replaced.
type roundRobin struct {
	hosts []string
	next  atomic.Uint64
	base  http.RoundTripper
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	i := rr.next.Add(1) - 1
	out := req.Clone(req.Context())
	out.URL.Host = rr.hosts[i%uint64(len(rr.hosts))]
	out.Host = ""
	return rr.base.RoundTrip(out)
}

// client returns an HTTP client whose requests to any host go to the api
// port of each of replicas in turn.
func client(api string, replicas ...*replica) *http.Client {
	rr := &roundRobin{base: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}
	for _, r := range replicas {
		rr.hosts = append(rr.hosts, r.addr[api])
	}
	return &http.Client{Transport: rr, Timeout: 30 * time.Second}
}

// direct returns an HTTP client to r alone.
func direct(r *replica, api string) *http.Client { return client(api, r) }

// call sends a JSON request (body nil for none) with a bearer token (or
// none) and returns the response with its body read.
func call(ctx context.Context, c *http.Client, method, url, token string, body any) (*http.Response, []byte, error) {
	r := testkit.Request{Method: method, URL: url, Token: token, Client: c}
	if body != nil {
		r = r.JSON(body)
	}
	return r.Send(ctx)
}

// mustCall is call that fails the test on a transport error or a status
// other than want, and decodes the body into out (when not nil).
func mustCall(t *testing.T, c *http.Client, method, url, token string, body any, want int, out any) *http.Response {
	t.Helper()
	r := testkit.Request{Method: method, URL: url, Token: token, Client: c}
	if body != nil {
		r = r.JSON(body)
	}
	return expect(t, r, want, out)
}

// expect sends r, fails the test on a transport error or a status other
// than want, and decodes the body into out (when not nil).
func expect(t *testing.T, r testkit.Request, want int, out any) *http.Response {
	t.Helper()
	resp, data := r.Do(t)
	require.Equal(t, want, resp.StatusCode, "%s %s: %s", r.Method, r.URL, data)
	if out != nil {
		require.NoError(t, json.Unmarshal(data, out), "%s", data)
	}
	return resp
}

// pamTeam is a PAM team with an admin service user's key, made through
// the admin API.
type pamTeam struct {
	name, keyID, keySecret string
}

func newPAMTeam(t *testing.T, admin *http.Client, token, name string) pamTeam {
	t.Helper()
	mustCall(t, admin, http.MethodPost, "http://admin/pam/teams", token, map[string]any{"name": name}, http.StatusCreated, nil)
	var creds struct {
		KeyID     string `json:"key_id"`
		KeySecret string `json:"key_secret"`
	}
	mustCall(t, admin, http.MethodPost, "http://admin/pam/teams/"+name+"/service_users", token,
		map[string]any{"name": "bot", "group": "admins", "roles": []string{"pam_admin"}}, http.StatusCreated, &creds)
	return pamTeam{name: name, keyID: creds.KeyID, keySecret: creds.KeySecret}
}

// pamToken exchanges the team's key for a bearer token through c.
func pamToken(t *testing.T, c *http.Client, team pamTeam) string {
	t.Helper()
	var tok struct {
		BearerToken string `json:"bearer_token"`
	}
	mustCall(t, c, http.MethodPost, "http://pam/v1/teams/"+team.name+"/service_token", "",
		map[string]string{"key_id": team.keyID, "key_secret": team.keySecret}, http.StatusOK, &tok)
	require.NotEmpty(t, tok.BearerToken)
	return tok.BearerToken
}

// nextLink is the URL of the Link header's rel="next", or "".
func nextLink(h http.Header) string {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if strings.Contains(part, `rel="next"`) {
				start, end := strings.Index(part, "<"), strings.Index(part, ">")
				if start >= 0 && end > start {
					return part[start+1 : end]
				}
			}
		}
	}
	return ""
}
