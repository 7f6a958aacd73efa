package testdb

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// URLVariable names a PostgreSQL server the tests use instead of starting
// one: a URL whose user may create databases and schemas.
const URLVariable = "APISTACK_TEST_POSTGRES_URL"

var (
	clusterOnce sync.Once
	clusterURL  string
	clusterErr  error
)

// postgresURL returns the URL of the PostgreSQL server of this test process:
// APISTACK_TEST_POSTGRES_URL when set, otherwise a throwaway cluster started
// on first use from the PostgreSQL binaries on the machine.
func postgresURL() (string, error) {
	if u := os.Getenv(URLVariable); u != "" {
		return u, nil
	}
	clusterOnce.Do(func() { clusterURL, clusterErr = startCluster() })
	return clusterURL, clusterErr
}

// BinDir finds the directory of the PostgreSQL programs (initdb, postgres,
// pg_isready): pg_config's answer, or the newest
// /usr/lib/postgresql/<version>/bin (Debian's layout, where pg_config is not
// on PATH without the dev package).
func BinDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, postgres) found: install Debian's postgresql package, or set " + URLVariable)
}

// DurableVariable, set to 1, makes the throwaway cluster as durable as a
// PostgreSQL is by default (fsync, synchronous_commit and full_page_writes
// left on), for the benchmarks of what waits for the disk; its directory is
// on the disk of the temporary directory (TMPDIR). A cluster that new runs
// write-heavy benchmarks far slower than one that has run for a while
// (docs/scale-out-benchmarks.md): name such a one with URLVariable.
const DurableVariable = "APISTACK_TEST_POSTGRES_DURABLE"

// serverArgs are the postgres server's arguments for a cluster in data with
// its socket in dir. Durability is not what a throwaway cluster is for: no
// fsync, unless durable. The benchmarks count the statements each request
// runs with pg_stat_statements, loaded when the machine's PostgreSQL has it
// (statStatements).
func serverArgs(data, dir string, durable, statStatements bool) []string {
	args := []string{"-D", data,
		"-k", dir, "-c", "listen_addresses=", "-p", "5432",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB"}
	if !durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	if statStatements {
		args = append(args, "-c", "shared_preload_libraries=pg_stat_statements")
	}
	return args
}

// startCluster creates a cluster in a temporary directory (initdb) and runs
// its server on a unix socket in that directory, as the postgres user when
// this process is root (the server refuses to run as root). The server is
// told to die with this process (parent-death signal); the directories of
// clusters whose server is gone are removed by the next start.
func startCluster() (string, error) {
	bin, err := BinDir()
	if err != nil {
		return "", err
	}
	removeStaleClusters()
	dir, err := os.MkdirTemp("", "apistack-pg-")
	if err != nil {
		return "", err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", fmt.Errorf("running as root, PostgreSQL needs a non-root user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "apistack", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %w\n%s", err, out)
	}
	server := exec.Command(filepath.Join(bin, "postgres"), serverArgs(data, dir, os.Getenv(DurableVariable) == "1", hasStatStatements(bin))...)
	server.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	server.Dir = dir
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return "", err
	}
	server.Stdout, server.Stderr = logFile, logFile
	if err := server.Start(); err != nil {
		return "", fmt.Errorf("start postgres: %w", err)
	}
	_ = logFile.Close()
	go func() { _ = server.Wait() }()
	url := fmt.Sprintf("postgres://apistack@/postgres?host=%s&port=5432&sslmode=disable", dir)
	if err := waitReady(url, 30*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		return "", fmt.Errorf("postgres did not start: %w\n%s", err, log)
	}
	return url, nil
}

// hasStatStatements reports whether the PostgreSQL programs in bin come
// with the pg_stat_statements library (a contrib module some packagings
// leave out).
func hasStatStatements(bin string) bool {
	out, err := exec.Command(filepath.Join(bin, "pg_config"), "--pkglibdir").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		dir = filepath.Join(filepath.Dir(bin), "lib") // Debian's layout
	}
	_, err = os.Stat(filepath.Join(dir, "pg_stat_statements.so"))
	return err == nil
}

// waitReady waits for the server at url to accept a query.
func waitReady(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		db, err := sql.Open("pgx", url)
		if err == nil {
			err = db.PingContext(ctx)
			_ = db.Close()
		}
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return last
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// removeStaleClusters removes the directories of earlier test processes'
// clusters whose server is no longer running.
func removeStaleClusters() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "apistack-pg-*"))
	for _, dir := range dirs {
		if serverRunning(filepath.Join(dir, "data", "postmaster.pid")) {
			continue
		}
		// A directory younger than a minute may be a cluster another test
		// process is still creating.
		if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > time.Minute {
			_ = os.RemoveAll(dir)
		}
	}
}

func serverRunning(pidFile string) bool {
	f, err := os.Open(pidFile)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}
