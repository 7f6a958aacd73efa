// Package benchproc runs an API server in a child process of a benchmark,
// so that the benchmark measures what the server alone spends per request
// (CPU time, user and system, and allocations), apart from its clients and
// from the PostgreSQL backends serving it, which it measures separately.
//
// The child is the benchmark's own test binary, run again with one test
// selected: that test calls Child, which serves what its setup started and
// answers its spending on a side port until the parent closes its stdin.
// Rounds of load on a SQLite child and a PostgreSQL child are interleaved
// (Interleave), so a machine whose load changes during the run slows both
// alike, and the ratios are the median of the rounds' ratios.
package benchproc

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apistack/apistack/servers/internal/testdb"
)

// childVariable carries, to the child, the backend it serves on.
const childVariable = "APISTACK_BENCHPROC_BACKEND"

// ProfileVariable names a directory where each child writes its CPU profile,
// <backend>.pprof, for the whole run (setup included): where a server's
// time goes.
const ProfileVariable = "APISTACK_BENCHPROC_PROFILE"

// readyPrefix starts the line the child prints once it serves.
const readyPrefix = "benchproc-ready: "

// ready is what the child tells the parent.
type ready struct {
	URL   string            `json:"url"`
	Stats string            `json:"stats"`
	Info  map[string]string `json:"info"`
}

// spent is what the child has spent so far.
type spent struct {
	CPUNanos int64  `json:"cpu_ns"`
	Allocs   uint64 `json:"allocs"`
}

// Child serves, when this process is a benchmark's child (Start), the
// server setup starts on the backend the parent asked for, until the parent
// closes the child's stdin; otherwise it skips t. setup returns the
// server's base URL and what the benchmark needs to call it (tokens).
func Child(t *testing.T, setup func(t testing.TB, backend testdb.Backend) (url string, info map[string]string)) {
	backend := os.Getenv(childVariable)
	if backend == "" {
		t.Skip("the server of a benchproc benchmark: runs only as its child process")
	}
	if dir := os.Getenv(ProfileVariable); dir != "" {
		f, err := os.Create(filepath.Join(dir, backend+".pprof"))
		if err != nil {
			t.Fatalf("benchproc: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatalf("benchproc: %v", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	url, info := setup(t, testdb.Backend(backend))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("benchproc: stats listener: %v", err)
	}
	stats := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(spentSoFar())
	})}
	go func() { _ = stats.Serve(ln) }()
	defer stats.Close()
	line, err := json.Marshal(ready{URL: url, Stats: "http://" + ln.Addr().String(), Info: info})
	if err != nil {
		t.Fatalf("benchproc: %v", err)
	}
	fmt.Printf("%s%s\n", readyPrefix, line)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// spentSoFar reads this process's CPU time and allocation count.
func spentSoFar() spent {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	var allocs uint64
	if s[0].Value.Kind() == metrics.KindUint64 {
		allocs = s[0].Value.Uint64()
	}
	return spent{CPUNanos: ru.Utime.Nano() + ru.Stime.Nano(), Allocs: allocs}
}

// Proc is a server running in a child process.
type Proc struct {
	// Backend is the engine the server runs on.
	Backend testdb.Backend
	// URL is the server's base URL.
	URL string
	// Info is what the child's setup returned besides the URL.
	Info map[string]string

	stats  string
	client *http.Client
	// pg, on PostgreSQL, reads the backends' process ids.
	pg *sql.DB
}

// Start runs the test test of this binary as a child serving on backend
// (the child calls Child) and returns once it serves. On PostgreSQL the
// child uses this process's test server. The child ends with b.
func Start(b *testing.B, test string, backend testdb.Backend) *Proc {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childVariable+"="+string(backend))
	p := &Proc{Backend: backend, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if backend == testdb.Postgres {
		url := testdb.PostgresURL(b)
		cmd.Env = append(cmd.Env, testdb.URLVariable+"="+url)
		db, err := sql.Open("pgx", url)
		if err != nil {
			b.Fatalf("benchproc: %v", err)
		}
		db.SetMaxOpenConns(1)
		b.Cleanup(func() { _ = db.Close() })
		p.pg = db
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatalf("benchproc: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatalf("benchproc: %v", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("benchproc: start the child: %v", err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		line, ok := strings.CutPrefix(lines.Text(), readyPrefix)
		if !ok {
			continue
		}
		var r ready
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			b.Fatalf("benchproc: the child's ready line: %v", err)
		}
		p.URL, p.Info, p.stats = r.URL, r.Info, r.Stats
		go func() { _, _ = io.Copy(os.Stdout, stdout) }()
		return p
	}
	b.Fatalf("benchproc: the child ended before serving (%v)", lines.Err())
	return nil
}

// Result is one round of load on a Proc.
type Result struct {
	// ReqPerSec is the round's throughput.
	ReqPerSec float64
	// CPUMicros is the server process's CPU time per request, user and
	// system.
	CPUMicros float64
	// Allocs is the server process's allocations per request.
	Allocs float64
	// BackendCPUMicros is the CPU time per request of the PostgreSQL
	// server's processes (its backends and background workers; 0 on
	// SQLite), from /proc at a resolution of 10 ms a process.
	BackendCPUMicros float64
}

// Round sends n requests made by newReq (i counts from 0) from clients
// concurrent clients, each expecting status and at least minBytes of body,
// and measures what the server and its database spent.
func (p *Proc) Round(b *testing.B, n, clients int, newReq func(p *Proc, i int64) *http.Request, status int, minBytes int64) Result {
	b.Helper()
	before, pgBefore := p.spent(b), p.backendCPU(b)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || failed.Load() != nil {
					return
				}
				resp, err := p.client.Do(newReq(p, i))
				if err != nil {
					failed.Store(err.Error())
					return
				}
				got, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != status || got < minBytes {
					failed.Store(fmt.Sprintf("status %d, %d bytes", resp.StatusCode, got))
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if f := failed.Load(); f != nil {
		b.Fatalf("benchproc: %s round: %s", p.Backend, f)
	}
	after, pgAfter := p.spent(b), p.backendCPU(b)
	return Result{
		ReqPerSec:        float64(n) / elapsed.Seconds(),
		CPUMicros:        float64(after.CPUNanos-before.CPUNanos) / 1e3 / float64(n),
		Allocs:           float64(after.Allocs-before.Allocs) / float64(n),
		BackendCPUMicros: float64(pgAfter-pgBefore) / 1e3 / float64(n),
	}
}

// spent asks the child what it has spent so far.
func (p *Proc) spent(b *testing.B) spent {
	resp, err := http.Get(p.stats)
	if err != nil {
		b.Fatalf("benchproc: stats: %v", err)
	}
	defer resp.Body.Close()
	var s spent
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		b.Fatalf("benchproc: stats: %v", err)
	}
	return s
}

// backendCPU sums the CPU time (ns) of the PostgreSQL server's processes
// running now, read from /proc (0 on SQLite, or when the server is not on
// this machine).
func (p *Proc) backendCPU(b *testing.B) int64 {
	if p.pg == nil {
		return 0
	}
	total, err := PostgresCPU(context.Background(), p.pg)
	if err != nil {
		b.Fatalf("benchproc: %v", err)
	}
	return total
}

// PostgresCPU sums the CPU time (ns, user and system) of the processes of
// the PostgreSQL server db (a pgx pool) is connected to: every backend and
// background worker pg_stat_activity lists, read from /proc at a
// resolution of 10 ms a process (0 for a server not on this machine).
func PostgresCPU(ctx context.Context, db *sql.DB) (int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity`)
	if err != nil {
		return 0, fmt.Errorf("backends: %w", err)
	}
	defer rows.Close()
	var total int64
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return 0, fmt.Errorf("backends: %w", err)
		}
		total += ProcCPU(pid)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("backends: %w", err)
	}
	return total, nil
}

// ProcessCPU is this process's CPU time so far (ns), user and system.
func ProcessCPU() int64 { return spentSoFar().CPUNanos }

// ProcCPU is the CPU time (ns) of process pid, user and system, from
// /proc/pid/stat (in clock ticks of 10 ms); 0 when it cannot be read.
func ProcCPU(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name is in parentheses and may hold spaces: the fields
	// counted from the last ')' are state (3), ..., utime (14), stime (15).
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return (utime + stime) * int64(10*time.Millisecond)
}

// Interleave runs rounds rounds of round on each of procs in turn (one
// round of each, then the next), and reports, per backend, the median of
// each measure and, for the second proc against the first, the median of
// the rounds' ratios: "<backend>-req/s", "<backend>-cpu-us/req",
// "<backend>-allocs/req", "<backend>-db-cpu-us/req", and "ratio-req/s",
// "ratio-cpu", "ratio-allocs", "cpu-bound-ratio".
func Interleave(b *testing.B, rounds int, procs [2]*Proc, round func(p *Proc) Result) {
	b.Helper()
	var res [2][]Result
	for range rounds {
		for i, p := range procs {
			res[i] = append(res[i], round(p))
		}
	}
	for i, p := range procs {
		name := string(p.Backend)
		b.ReportMetric(median(res[i], func(r Result) float64 { return r.ReqPerSec }), name+"-req/s")
		b.ReportMetric(median(res[i], func(r Result) float64 { return r.CPUMicros }), name+"-cpu-us/req")
		b.ReportMetric(median(res[i], func(r Result) float64 { return r.Allocs }), name+"-allocs/req")
		if p.Backend == testdb.Postgres {
			b.ReportMetric(median(res[i], func(r Result) float64 { return r.BackendCPUMicros }), name+"-db-cpu-us/req")
		}
	}
	ratio := func(f func(Result) float64) float64 {
		rs := make([]float64, rounds)
		for r := range rounds {
			rs[r] = f(res[1][r]) / f(res[0][r])
		}
		return medianOf(rs)
	}
	b.ReportMetric(ratio(func(r Result) float64 { return r.ReqPerSec }), "ratio-req/s")
	b.ReportMetric(ratio(func(r Result) float64 { return r.CPUMicros }), "ratio-cpu")
	b.ReportMetric(ratio(func(r Result) float64 { return r.Allocs }), "ratio-allocs")
	// What a request costs the machine, the server's CPU and its
	// database's: on cores both setups share and keep busy, throughput goes
	// as its inverse, so this ratio (the first proc's cost over the
	// second's, clients left out) is what ratio-req/s tends to there.
	costs := make([]float64, rounds)
	for r := range rounds {
		costs[r] = (res[0][r].CPUMicros + res[0][r].BackendCPUMicros) / (res[1][r].CPUMicros + res[1][r].BackendCPUMicros)
	}
	b.ReportMetric(medianOf(costs), "cpu-bound-ratio")
	for r := range rounds {
		b.Logf("round %d: %s %.0f req/s %.0f cpu-us %.0f allocs; %s %.0f req/s %.0f cpu-us %.0f allocs %.0f db-cpu-us", r+1,
			procs[0].Backend, res[0][r].ReqPerSec, res[0][r].CPUMicros, res[0][r].Allocs,
			procs[1].Backend, res[1][r].ReqPerSec, res[1][r].CPUMicros, res[1][r].Allocs, res[1][r].BackendCPUMicros)
	}
}

func median(rs []Result, f func(Result) float64) float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	return medianOf(vs)
}

func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}
