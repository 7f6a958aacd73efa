package benchhttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Config configures a harness run.
type Config struct {
	// Root is the module's root directory (where go.mod and specs/ are).
	Root string
	// Scenarios are run in order.
	Scenarios []Scenario
	// Duration and Warmup are the measured and unmeasured parts of each run;
	// Rounds is the number of interleaved rounds.
	Duration, Warmup time.Duration
	Rounds           int
	// Connections, when not 0, replaces every scenario's connection count.
	Connections int
	// Prism is the prism CLI to run; "" measures without Prism.
	Prism string
	// Binary is a built apistack binary; "" builds ./servers/cmd/apistack.
	Binary string
	// CeilingCommand returns the command of a ceiling child (which must call
	// RunCeilingIfChild first thing); nil re-runs this executable.
	CeilingCommand func() (*exec.Cmd, error)
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// CPUProfileDir, when set, has each apistack process write a pprof CPU
	// profile of its whole run there (`serve --cpu-profile`), when the
	// harness stops it: CPUProfilePath names the files.
	CPUProfileDir string
}

// harness is one run's state: the children it started, stopped at the end.
type harness struct {
	cfg      Config
	work     string
	children []*child
	log      func(format string, args ...any)
}

// Run measures every scenario and returns the report. Every child process
// it started is stopped before it returns, also when ctx ends.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Rounds < 1 || cfg.Duration <= 0 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("benchhttp: rounds must be at least 1 and duration positive (got %d, %s, warm-up %s)", cfg.Rounds, cfg.Duration, cfg.Warmup)
	}
	if len(cfg.Scenarios) == 0 {
		return nil, errors.New("benchhttp: no scenario to run")
	}
	work, err := os.MkdirTemp("", "benchhttp-")
	if err != nil {
		return nil, fmt.Errorf("benchhttp: %w", err)
	}
	defer os.RemoveAll(work)
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	h := &harness{cfg: cfg, work: work, log: func(format string, args ...any) {
		fmt.Fprintf(out, "benchhttp: "+format+"\n", args...)
	}}
	defer h.stopAll()
	return h.run(ctx)
}

// stopChild stops c and forgets it.
func (h *harness) stopChild(c *child) {
	c.stop(5 * time.Second)
	h.children = slices.DeleteFunc(h.children, func(x *child) bool { return x == c })
}

func (h *harness) stopAll() {
	for i := len(h.children) - 1; i >= 0; i-- {
		h.children[i].stop(10 * time.Second)
	}
}

func (h *harness) run(ctx context.Context) (*Report, error) {
	cfg := h.cfg
	report := &Report{
		Machine: Machine{CPUs: runtime.NumCPU(), CPUModel: cpuModel(), GoVersion: goVersion(ctx, cfg.Root), Date: time.Now().UTC(),
			LoadBefore: loadAverage(), Commit: gitCommit(ctx, cfg.Root)},
		Duration: cfg.Duration, Warmup: cfg.Warmup, Rounds: cfg.Rounds,
	}
	bin := cfg.Binary
	if bin == "" {
		h.log("building ./servers/cmd/apistack")
		var err error
		if bin, err = buildAPIStack(ctx, cfg.Root, h.work); err != nil {
			return nil, err
		}
	}

	h.log("starting apistack serve --demo and loading the data")
	main, err := startAPIStack(ctx, ServerAPIStack, bin, filepath.Join(h.work, "data"), h.profileArgs(ServerAPIStack))
	if err != nil {
		return nil, err
	}
	h.children = append(h.children, main.proc)
	instances := []*instance{main}
	var validate *instance
	for _, s := range cfg.Scenarios {
		if s.ValidateResponses && validate == nil {
			h.log("starting apistack serve --demo --validate-responses")
			if validate, err = startAPIStack(ctx, ServerValidate, bin, filepath.Join(h.work, "data-validate"), append([]string{"--validate-responses"}, h.profileArgs(ServerValidate)...)); err != nil {
				return nil, err
			}
			h.children = append(h.children, validate.proc)
			instances = append(instances, validate)
		}
	}

	prism := map[string]string{}
	if cfg.Prism != "" {
		report.Prism = prismVersion(cfg.Prism)
		if prism, err = h.startPrisms(ctx); err != nil {
			return nil, err
		}
	}

	for _, s := range cfg.Scenarios {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := h.scenario(ctx, s, main, validate, prism)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		report.Scenarios = append(report.Scenarios, res)
	}
	for _, inst := range instances {
		if inst.proc.exited() {
			return nil, inst.proc.failure()
		}
		rss, err := rssBytes(inst.proc.pid())
		if err != nil {
			return nil, err
		}
		report.Memory = append(report.Memory, MemoryResult{Process: serverLabels[inst.name], RSS: rss,
			ErrorLogs: inst.proc.out.count(logError), Violations: inst.proc.out.count(logViolation)})
	}
	report.Machine.LoadAfter = loadAverage()
	return report, nil
}

// CPUProfilePath returns the file the CPU profile of an apistack server
// (ServerAPIStack or ServerValidate) is written to under dir.
func CPUProfilePath(dir, server string) string {
	name := strings.NewReplacer(" ", "", "--", "-").Replace(server)
	return filepath.Join(dir, name+".pprof")
}

// profileArgs returns the serve flags profiling the server, if asked for.
func (h *harness) profileArgs(server string) []string {
	if h.cfg.CPUProfileDir == "" {
		return nil
	}
	return []string{"--cpu-profile", CPUProfilePath(h.cfg.CPUProfileDir, server)}
}

// target is one server a scenario runs against.
type target struct {
	name string
	// build returns a request function for one run: each run builds its
	// own, so a write path's names never repeat those of an earlier round.
	build   func() RequestFunc
	result  *ServerResult
	latency Histogram
}

func (h *harness) scenario(ctx context.Context, s Scenario, main, validate *instance, prism map[string]string) (ScenarioResult, error) {
	cfg := h.cfg
	conns := s.Connections
	if cfg.Connections > 0 {
		conns = cfg.Connections
	}
	res := ScenarioResult{Name: s.Name, Title: s.Title, Request: s.Request, Note: s.Note, Connections: conns, Write: s.Write, Headline: s.Headline, API: s.API}
	h.log("scenario %s", s.Name)
	builder := func(fx *Fixture, base string) func() RequestFunc {
		return func() RequestFunc { return s.build(fx, base) }
	}

	// apistack's answer, recorded for the ceiling.
	base := main.fixture.creds.baseURL(s.API)
	rec, err := probe(ctx, s.build(main.fixture, base))
	if err != nil {
		return res, fmt.Errorf("apistack: %w", err)
	}
	var targets []*target
	add := func(name string, build func() RequestFunc, broken string, status, size int) {
		targets = append(targets, &target{name: name, build: build,
			result: &ServerResult{Server: name, Broken: broken, Status: status, ResponseBytes: size}})
	}
	if !isSuccess(rec.Status) {
		add(ServerCeiling, nil, "apistack answered an error: no answer to replay", rec.Status, len(rec.Body))
	} else {
		addr, ceiling, err := h.startCeiling(rec)
		if err != nil {
			return res, err
		}
		defer h.stopChild(ceiling) // this scenario's ceiling ends with it
		add(ServerCeiling, builder(main.fixture, "http://"+addr), "", rec.Status, len(rec.Body))
	}
	add(ServerAPIStack, builder(main.fixture, base), brokenIf(rec), rec.Status, len(rec.Body))
	if s.ValidateResponses && validate != nil {
		build := builder(validate.fixture, validate.fixture.creds.baseURL(s.API))
		r, err := probe(ctx, build())
		if err != nil {
			return res, fmt.Errorf("apistack --validate-responses: %w", err)
		}
		add(ServerValidate, build, brokenIf(r), r.Status, len(r.Body))
	}
	if pb, ok := prism[s.API]; ok {
		build := builder(main.fixture, pb)
		r, err := probe(ctx, build())
		if err != nil {
			return res, fmt.Errorf("prism: %w", err)
		}
		add(ServerPrism, build, brokenIf(r), r.Status, len(r.Body))
	}
	// The ceiling replays apistack's answer: check it answers that.
	if c := targets[0]; c.result.Broken == "" {
		r, err := probe(ctx, c.build())
		if err != nil {
			return res, fmt.Errorf("ceiling: %w", err)
		}
		if r.Status != rec.Status || len(r.Body) != len(rec.Body) {
			return res, fmt.Errorf("ceiling answered %d with %d bytes, apistack %d with %d", r.Status, len(r.Body), rec.Status, len(rec.Body))
		}
	}

	for round := range cfg.Rounds {
		for _, t := range targets {
			if t.result.Broken != "" {
				continue
			}
			lr, err := Load{Connections: conns, Warmup: cfg.Warmup, Duration: cfg.Duration, Request: t.build()}.Run(ctx)
			if err != nil {
				return res, fmt.Errorf("%s round %d: %w", t.name, round+1, err)
			}
			r := t.result
			r.RoundRPS = append(r.RoundRPS, lr.RPS())
			r.Requests += lr.Requests
			r.Errors += lr.Errors
			if r.FirstError == "" {
				r.FirstError = lr.FirstError
			}
			t.latency.Merge(lr.Latency)
			h.log("  round %d %-30s %8.0f req/s  p99 %s ms  errors %d", round+1, t.name, lr.RPS(), ms(lr.Latency.Quantile(0.99)), lr.Errors)
		}
	}
	for _, t := range targets {
		t.result.P50, t.result.P99 = t.latency.Quantile(0.5), t.latency.Quantile(0.99)
		res.Servers = append(res.Servers, *t.result)
	}
	return res, nil
}

func isSuccess(status int) bool { return status >= 200 && status <= 299 }

// brokenIf says why a server whose check answered r is not measured. Prism
// explains a refusal in its sl-violations header: its messages are kept.
func brokenIf(r Recorded) string {
	if isSuccess(r.Status) {
		return ""
	}
	msg := fmt.Sprintf("answered %d: %s", r.Status, snippet(r.Body))
	if v := r.Header.Get("Sl-Violations"); v != "" {
		var violations []struct {
			Location []string `json:"location"`
			Message  string   `json:"message"`
		}
		if json.Unmarshal([]byte(v), &violations) == nil {
			var parts []string
			for _, x := range violations {
				if len(x.Location) > 0 && x.Location[0] == "request" {
					parts = append(parts, x.Message)
				}
			}
			if len(parts) > 0 {
				msg = fmt.Sprintf("answered %d, rejecting the request: %s", r.Status, strings.Join(parts, "; "))
			}
		}
	}
	return msg
}

// probe sends one request of fn and records the answer.
func probe(ctx context.Context, fn RequestFunc) (Recorded, error) {
	req, err := fn(ctx, 0, -1)
	if err != nil {
		return Recorded{}, fmt.Errorf("building the request: %w", err)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return Recorded{}, err
	}
	return recordResponse(resp)
}

// startCeiling starts a ceiling child answering rec and returns its address.
func (h *harness) startCeiling(rec Recorded) (addr string, c *child, err error) {
	addr, c, err = h.startCeilingChild(rec)
	if err != nil && c != nil {
		h.stopChild(c)
	}
	return addr, c, err
}

func (h *harness) startCeilingChild(rec Recorded) (string, *child, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp(h.work, "recorded-*.json")
	if err != nil {
		return "", nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	var cmd *exec.Cmd
	if h.cfg.CeilingCommand != nil {
		cmd, err = h.cfg.CeilingCommand()
	} else {
		var self string
		self, err = os.Executable()
		cmd = exec.Command(self)
	}
	if err != nil {
		return "", nil, fmt.Errorf("ceiling command: %w", err)
	}
	cmd.Env = append(os.Environ(), CeilingEnv+"="+f.Name())
	c, line, err := startChild("ceiling", cmd, true)
	if err != nil {
		return "", nil, err
	}
	h.children = append(h.children, c)
	addr, ok := strings.CutPrefix(line, "listening ")
	if !ok {
		return "", c, fmt.Errorf("ceiling announced %q, not its address", line)
	}
	if err := waitHTTP(context.Background(), c, "http://"+addr+"/", 10*time.Second); err != nil {
		return "", c, fmt.Errorf("ceiling: %w", err)
	}
	return addr, c, nil
}

// startPrisms starts one Prism mock per API the scenarios use, all at once
// (each takes seconds to start), and returns their base URLs by API once
// every one answers.
func (h *harness) startPrisms(ctx context.Context) (map[string]string, error) {
	urls := map[string]string{}
	type started struct {
		api, url string
		proc     *child
	}
	var all []started
	for _, s := range h.cfg.Scenarios {
		if _, ok := urls[s.API]; ok {
			continue
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		spec := filepath.Join(h.cfg.Root, "specs", s.API, "openapi.yaml")
		h.log("starting prism mock -p %d %s", port, spec)
		cmd := exec.Command(h.cfg.Prism, "mock", "-h", "127.0.0.1", "-p", fmt.Sprint(port), spec)
		c, _, err := startChild("prism "+s.API, cmd, false)
		if err != nil {
			return nil, err
		}
		h.children = append(h.children, c)
		urls[s.API] = fmt.Sprintf("http://127.0.0.1:%d", port)
		all = append(all, started{s.API, urls[s.API], c})
	}
	for _, p := range all {
		if err := waitHTTP(ctx, p.proc, p.url+"/", 2*time.Minute); err != nil {
			return nil, fmt.Errorf("prism for %s did not come up: %w", p.api, err)
		}
	}
	return urls, nil
}

// freePort returns a port free on loopback now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// prismVersion reads the installed Prism CLI's version from its package.
func prismVersion(prism string) string {
	bin, err := filepath.EvalSymlinks(prism)
	if err != nil {
		return "unknown version"
	}
	// .../node_modules/@stoplight/prism-cli/dist/index.js
	for dir := filepath.Dir(bin); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			continue
		}
		var pkg struct{ Name, Version string }
		if json.Unmarshal(data, &pkg) == nil && pkg.Name == "@stoplight/prism-cli" {
			return pkg.Version
		}
	}
	return "unknown version"
}

// gitCommit describes the commit of the source in root: its short hash,
// "-dirty" when files other than BENCHMARKS.md differ from it, and its branch.
func gitCommit(ctx context.Context, root string) string {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	hash, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return ""
	}
	if status, err := git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!BENCHMARKS.md"); err == nil && status != "" {
		hash += "-dirty"
	}
	if branch, err := git("rev-parse", "--abbrev-ref", "HEAD"); err == nil && branch != "" && branch != "HEAD" {
		hash += " (" + branch + ")"
	}
	return hash
}

// loadAverage returns the 1, 5 and 15 minute load averages of /proc/loadavg.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// cpuModel reads the CPU's model name from /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// goVersion asks the go command for its version (what builds apistack), and
// falls back to the harness's own.
func goVersion(ctx context.Context, root string) string {
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.CommandContext(ctx, goTool, "version")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return runtime.Version()
}
