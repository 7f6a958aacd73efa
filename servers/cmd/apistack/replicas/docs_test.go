package replicas

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/docblocks"
	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../../../.."

// postgresBin is the directory of the machine's PostgreSQL programs
// (testdb.BinDir). Without them the test is skipped, except under CI.
func postgresBin(t *testing.T) string {
	t.Helper()
	dir, err := testdb.BinDir()
	testkit.Need(t, "PostgreSQL's programs (Debian's postgresql)", err)
	return dir
}

// freshServer starts a PostgreSQL server of its own, as a newcomer's would
// be: superuser postgres, listening on a loopback TCP port, nothing created
// yet. It returns the port.
func freshServer(t *testing.T, bin string) string {
	t.Helper()
	// Under the system's temporary directory, not t.TempDir: the postgres
	// user must reach it (t.TempDir's parent is private to this user).
	dir, err := os.MkdirTemp("", "apistack-docs-pg-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 { // the server refuses to run as root
		u, err := user.Lookup("postgres")
		require.NoError(t, err, "running as root, PostgreSQL needs the postgres user")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		require.NoError(t, os.Chown(dir, uid, gid))
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	out, err := initdb.CombinedOutput()
	require.NoError(t, err, "initdb: %s", out)
	port := strings.TrimPrefix(freePorts(t, 1)[0], "127.0.0.1:")
	server := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-c", "listen_addresses=127.0.0.1", "-p", port,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	server.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	server.Dir = dir
	log := &safebuf.Buffer{}
	server.Stdout, server.Stderr = log, log
	proc := testkit.Start(t, server, testkit.Stop{Signal: syscall.SIGINT, Grace: 15 * time.Second}, "postgres log", log.String) // SIGINT: fast shutdown
	proc.Await(t, 30*time.Second, 50*time.Millisecond, func() bool {
		return exec.Command(filepath.Join(bin, "pg_isready"), "-h", "127.0.0.1", "-p", port).Run() == nil
	}, "postgres did not start", log.String)
	return port
}

// TestDocs_ScalingOutStepsAsWritten runs the scaling-out guide's steps,
// then its HAProxy-on-the-host steps, in one bash as a newcomer pastes them,
// from the repository's root, against a fresh PostgreSQL server (PGHOST and
// PGPORT set, as the block says): it makes the role and the database, builds
// the binary, starts three replicas on their own ports and data directories,
// waits for each to be ready, and puts HAProxy in front on the usual ports.
// Then a token one replica issues works on the others.
func TestDocs_ScalingOutStepsAsWritten(t *testing.T) {
	bin := postgresBin(t)
	testkit.Tools(t, "bash", "curl", "make", "base64", "haproxy", "sed")
	// The blocks bind 127.0.0.1:8181-8389 and HAProxy 8481-8484 and 8489:
	// they must be free.
	var addrs []string
	for _, i := range []int{1, 2, 3, 4} {
		for _, off := range []int{1, 2, 3, 4, 9} {
			addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", 8080+100*i+off))
		}
	}
	for _, addr := range addrs {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			t.Fatalf("%s is taken: the guide's replicas and HAProxy need it", addr)
		}
	}
	port := freshServer(t, bin)
	block := docblocks.Block(t, "docs/scaling-out.md", "scaling-out") + docblocks.Block(t, "docs/scaling-out.md", "haproxy-host")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = root
	var env []string
	for _, kv := range cleanEnv() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	// mktemp -d makes the working directory under the test's own.
	tmp := t.TempDir()
	cmd.Env = append(env, "PGHOST=127.0.0.1", "PGPORT="+port, "PATH="+bin+":"+os.Getenv("PATH"), "TMPDIR="+tmp)
	// The replicas are the block's background jobs, in its process group:
	// the cleanup ends them all (SIGTERM, as kill %1 %2 %3 would).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	output := &safebuf.Buffer{}
	cmd.Stdout, cmd.Stderr = output, output
	started := time.Now()
	require.NoError(t, cmd.Start())
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		require.Eventually(t, func() bool { return syscall.Kill(-pgid, 0) != nil }, 30*time.Second, 50*time.Millisecond,
			"the replicas stop on SIGTERM")
	})
	err = cmd.Wait()
	require.NoError(t, err, "the block as written:\n%s", output)
	t.Logf("the Scaling out steps took %s (make build included)", time.Since(started).Round(time.Second))
	assert.Equal(t, 4, strings.Count(output.String(), `{"status":"ready"}`), "step 5 saw the three ready, step 7 HAProxy:\n%s", output)
	assert.Regexp(t, `(?i)x-apistack-replica: replica[123]`, output.String(), "step 7 names the replica that answered")

	// One service: a team made through replica 1's admin port, a token
	// issued by replica 2, used on replicas 1, 2 and 3.
	rs := make([]*replica, 3)
	for i := range rs {
		p := 8080 + 100*(i+1)
		rs[i] = &replica{addr: map[string]string{
			"pam": fmt.Sprintf("127.0.0.1:%d", p+1), "admin": fmt.Sprintf("127.0.0.1:%d", p+9),
		}}
	}
	tokenFiles, _ := filepath.Glob(filepath.Join(tmp, "*", "admin.token"))
	require.Len(t, tokenFiles, 1, "step 3 wrote the admin token in its working directory")
	adminToken, err := os.ReadFile(tokenFiles[0])
	require.NoError(t, err)
	team := newPAMTeam(t, direct(rs[0], "admin"), strings.TrimSpace(string(adminToken)), "scaled-out")
	token := pamToken(t, direct(rs[1], "pam"), team)
	for _, r := range rs {
		mustCall(t, direct(r, "pam"), http.MethodGet, "http://pam/v1/teams/scaled-out/current_user", token, nil, http.StatusOK, nil)
	}
}
