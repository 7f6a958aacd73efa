package benchhttp

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The servers a scenario is measured against, in the order each round runs them.
const (
	ServerCeiling  = "ceiling"
	ServerAPIStack = "apistack"
	ServerValidate = "apistack --validate-responses"
	ServerPrism    = "prism"
)

// Report is the outcome of a run: BENCHMARKS.md is written from it.
type Report struct {
	// Machine is where it ran.
	Machine Machine `json:"machine"`
	// Duration and Warmup are the lengths of each measured run and of the
	// unmeasured load before it; Rounds is the number of interleaved rounds.
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`
	Rounds   int           `json:"rounds"`
	// Prism is the version of the Prism CLI, or "" when it was not run.
	Prism string `json:"prism"`
	// Scenarios holds one result per scenario run.
	Scenarios []ScenarioResult `json:"scenarios"`
	// Memory holds the apistack processes' VmRSS after the whole run.
	Memory []MemoryResult `json:"memory"`
}

// Machine describes the machine a report was measured on.
type Machine struct {
	// CPUs is the number of CPUs the harness may use (nproc).
	CPUs int `json:"cpus"`
	// CPUModel is /proc/cpuinfo's model name.
	CPUModel string `json:"cpu_model"`
	// GoVersion is what `go version` answers.
	GoVersion string `json:"go_version"`
	// Date is when the run started.
	Date time.Time `json:"date"`
	// Commit is the measured source's git commit, "-dirty" when it had
	// uncommitted changes, with its branch; empty outside a git checkout.
	Commit string `json:"commit,omitempty"`
	// LoadBefore and LoadAfter are /proc/loadavg's 1, 5 and 15 minute load
	// averages before and after the run: other work on the machine skews it.
	LoadBefore string `json:"load_before,omitempty"`
	LoadAfter  string `json:"load_after,omitempty"`
}

// MemoryResult is one apistack process's resident set size, and what its
// log said during the run.
type MemoryResult struct {
	// Process names the process.
	Process string `json:"process"`
	// RSS is its VmRSS from /proc/PID/status, in bytes.
	RSS int64 `json:"rss_bytes"`
	// ErrorLogs counts the lines it logged at level ERROR.
	ErrorLogs int `json:"error_logs"`
	// Violations counts its "response breaks the spec" lines (logged with
	// --validate-responses).
	Violations int `json:"violations"`
}

// ScenarioResult is one scenario's measurements, one per server.
type ScenarioResult struct {
	// Name, Title, Request, Note, Write and Headline are the Scenario's.
	Name     string `json:"name"`
	Title    string `json:"title"`
	Request  string `json:"request"`
	Note     string `json:"note,omitempty"`
	Write    bool   `json:"write,omitempty"`
	Headline bool   `json:"headline,omitempty"`
	// API is the API the scenario exercises.
	API string `json:"api"`
	// Connections is the number of connections it ran with.
	Connections int `json:"connections"`
	// Servers holds a result per server, in the order each round ran them.
	Servers []ServerResult `json:"servers"`
}

// Server returns the result of the named server, or nil.
func (s ScenarioResult) Server(name string) *ServerResult {
	for i := range s.Servers {
		if s.Servers[i].Server == name {
			return &s.Servers[i]
		}
	}
	return nil
}

// ServerResult is one server's measurements in one scenario.
type ServerResult struct {
	// Server is one of the Server* names.
	Server string `json:"server"`
	// Broken says why the server was not measured (its answer to the check
	// before measuring was not a success); empty when it was.
	Broken string `json:"broken,omitempty"`
	// Status and ResponseBytes describe its answer to the check.
	Status        int `json:"status"`
	ResponseBytes int `json:"response_bytes"`
	// RoundRPS holds the requests per second of each round.
	RoundRPS []float64 `json:"round_rps"`
	// Requests and Errors count the measured requests of every round;
	// Errors are the non-2xx answers and transport failures.
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	// FirstError describes the first error seen.
	FirstError string `json:"first_error,omitempty"`
	// P50 and P99 are latency quantiles over every round's requests.
	P50 time.Duration `json:"p50"`
	P99 time.Duration `json:"p99"`
}

// Median returns the median of the rounds' requests per second (0 when not
// measured).
func (s *ServerResult) Median() float64 {
	if s == nil || s.Broken != "" || len(s.RoundRPS) == 0 {
		return 0
	}
	v := slices.Clone(s.RoundRPS)
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// measured reports whether s ran and has a rate.
func (s *ServerResult) measured() bool { return s != nil && s.Broken == "" && s.Median() > 0 }

// ratio returns a/b's medians, and whether both were measured.
func ratio(a, b *ServerResult) (float64, bool) {
	if !a.measured() || !b.measured() {
		return 0, false
	}
	return a.Median() / b.Median(), true
}

// Outcome is a target's verdict.
type Outcome string

// The verdicts of a target.
const (
	Pass        Outcome = "pass"
	Fail        Outcome = "FAIL"
	NotMeasured Outcome = "not measured"
)

// TargetCheck is one of the targets checked against a report.
type TargetCheck struct {
	// Target says what is wanted.
	Target string
	// Measured is the value measured, or why there is none.
	Measured string
	// Outcome is the verdict.
	Outcome Outcome
}

// MaxRSS is the memory target: the apistack process's VmRSS after the run.
const MaxRSS = 100 << 20

// Targets checks the report against the targets.
func (r Report) Targets() []TargetCheck {
	var out []TargetCheck
	byName := map[string]ScenarioResult{}
	for _, s := range r.Scenarios {
		byName[s.Name] = s
	}
	verdict := func(ok bool) Outcome {
		if ok {
			return Pass
		}
		return Fail
	}
	atLeast := func(target, scenario, a, b string, want float64, unit string) {
		s, ran := byName[scenario]
		c := TargetCheck{Target: target, Outcome: NotMeasured, Measured: "—"}
		if ran {
			for _, name := range []string{a, b} {
				if sv := s.Server(name); sv != nil && sv.Broken != "" {
					c.Measured = serverLabels[name] + " broken"
				}
			}
			if v, ok := ratio(s.Server(a), s.Server(b)); ok {
				c.Measured = fmt.Sprintf("%.2f%s", v, unit)
				c.Outcome = verdict(v >= want)
			}
		}
		out = append(out, c)
	}
	atLeast("PAM list ≥ 0.25 of the ceiling", "pam-list", ServerAPIStack, ServerCeiling, 0.25, "")
	atLeast("restaurant list ≥ 0.25 of the ceiling", "restaurant-list", ServerAPIStack, ServerCeiling, 0.25, "")
	atLeast("PAM list with --validate-responses ≥ 0.8 of without", "pam-list", ServerValidate, ServerAPIStack, 0.8, "")
	// Every API at least 3x Prism on its main list or send operation: the
	// best of the API's headline scenarios.
	var apis []string
	headlines := map[string][]ScenarioResult{}
	for _, s := range r.Scenarios {
		if s.Headline {
			if headlines[s.API] == nil {
				apis = append(apis, s.API)
			}
			headlines[s.API] = append(headlines[s.API], s)
		}
	}
	for _, api := range apis {
		c := TargetCheck{Target: api + ": main list or send ≥ 3x Prism", Outcome: NotMeasured, Measured: "—"}
		var parts []string
		best := -1.0
		for _, s := range headlines[api] {
			if v, ok := ratio(s.Server(ServerAPIStack), s.Server(ServerPrism)); ok {
				parts = append(parts, fmt.Sprintf("%s %.2fx", s.Name, v))
				best = max(best, v)
			} else if p := s.Server(ServerPrism); p != nil && p.Broken != "" {
				parts = append(parts, s.Name+": Prism mock broken")
			}
		}
		if len(parts) > 0 {
			c.Measured = strings.Join(parts, ", ")
		}
		if best >= 0 {
			c.Outcome = verdict(best >= 3)
		}
		out = append(out, c)
	}
	for _, s := range r.Scenarios {
		if !s.Write {
			continue
		}
		c := TargetCheck{Target: s.Title + ": 0 errors and p99 < 50 ms", Outcome: NotMeasured, Measured: "—"}
		if a := s.Server(ServerAPIStack); a.measured() {
			c.Measured = fmt.Sprintf("%d errors, p99 %s ms", a.Errors, ms(a.P99))
			c.Outcome = verdict(a.Errors == 0 && a.P99 < 50*time.Millisecond)
		}
		out = append(out, c)
	}
	for _, m := range r.Memory {
		out = append(out, TargetCheck{
			Target:   fmt.Sprintf("%s VmRSS after the run < 100 MiB", m.Process),
			Measured: fmt.Sprintf("%.1f MiB", float64(m.RSS)/(1<<20)),
			Outcome:  verdict(m.RSS < MaxRSS),
		})
	}
	return out
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// thousands formats n with a comma every three digits.
func thousands(n float64) string {
	s := fmt.Sprintf("%.0f", n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

var serverLabels = map[string]string{
	ServerCeiling:  "ceiling (bare echo, recorded answer)",
	ServerAPIStack: "apistack serve",
	ServerValidate: "apistack serve --validate-responses",
	ServerPrism:    "Prism mock",
}

// WriteMarkdown writes the report as BENCHMARKS.md.
func (r Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# HTTP benchmarks\n\n")
	p("Generated by `make bench-http` (`go run ./bench/cmd/benchhttp`); do not edit, run it again.\n\n")
	p("## Machine\n\n")
	p("- Date: %s\n", r.Machine.Date.UTC().Format("2006-01-02 15:04 UTC"))
	p("- CPUs: %d (`nproc`)", r.Machine.CPUs)
	if r.Machine.CPUModel != "" {
		p(", %s", r.Machine.CPUModel)
	}
	p("\n- Go: %s\n", r.Machine.GoVersion)
	if r.Machine.Commit != "" {
		p("- Source measured: commit %s\n", r.Machine.Commit)
	}
	if r.Machine.LoadBefore != "" {
		p("- Load average (1, 5, 15 min, `/proc/loadavg`): %s before the run, %s after\n", r.Machine.LoadBefore, r.Machine.LoadAfter)
	}
	if r.Prism != "" {
		p("- Prism: @stoplight/prism-cli %s\n", r.Prism)
	} else {
		p("- Prism: not run (not installed: `make .tools/node_modules/.bin/prism`)\n")
	}
	p("\n## Method\n\n")
	p("The harness builds `./servers/cmd/apistack`, starts `apistack serve --demo` on a fresh data directory with every API on a free port " +
		"(rate limits raised out of the way: `--pam-rate-limit`, `--restaurant-rate-per-second`, `--restaurant-rate-limit`), reads " +
		"`demo-credentials.json` and loads the data through the public APIs: the PAM demo team filled to 100 groups; the demo restaurant " +
		"has 500 menu items. A second instance runs with `--validate-responses` for the scenarios that measure it.\n\n")
	p("For each scenario the harness sends the request once to apistack and records the answer (status, headers, body). " +
		"The **ceiling** is a bare echo (labstack/echo/v4) server in a child process answering every request with exactly those bytes " +
		"from memory: what the machine, the network stack and the load generator allow. **Prism** (`prism mock -p PORT specs/<api>/openapi.yaml`) " +
		"gets the same request and answers its own example, usually much smaller than apistack's answer: the table says its size. " +
		"Every server is checked with one request before it is measured; a server answering an error is reported as broken, not measured.\n\n")
	p("The load generator is the harness process itself (`bench/benchhttp`, closed loop): N connections kept alive, each sending a request, "+
		"reading the whole answer and sending the next; requests are built per call (unique names for the write path, a fresh signature "+
		"for each storage PUT); every latency goes into a log-linear histogram (within 1.6 %%). Rounds are interleaved: for each scenario, "+
		"round r runs the ceiling, apistack, apistack `--validate-responses` where measured, and Prism in turn, each for %s after %s of "+
		"unmeasured warm-up; %d round(s). req/s is the median of the rounds; p50 and p99 are over every round's requests; errors are "+
		"non-2xx answers and transport failures. The servers and the load generator share the machine's CPUs.\n\n",
		r.Duration, r.Warmup, r.Rounds)

	p("## Targets\n\n| target | measured | result |\n|---|---:|---|\n")
	for _, t := range r.Targets() {
		p("| %s | %s | %s |\n", t.Target, t.Measured, t.Outcome)
	}
	p("\n## Scenarios\n")
	for _, s := range r.Scenarios {
		p("\n### %s (`%s`)\n\n", s.Title, s.Name)
		p("`%s`, %d connections.\n\n", s.Request, s.Connections)
		p("| server | req/s (median) | req/s per round | share of ceiling | p50 ms | p99 ms | errors | answer |\n")
		p("|---|---:|---|---:|---:|---:|---:|---|\n")
		ceiling := s.Server(ServerCeiling)
		for _, sv := range s.Servers {
			label := serverLabels[sv.Server]
			answer := fmt.Sprintf("%d, %s B", sv.Status, thousands(float64(sv.ResponseBytes)))
			if sv.Server == ServerPrism {
				answer += " (its example)"
			}
			if sv.Broken != "" {
				p("| %s | broken | — | — | — | — | — | %s |\n", label, mdEscape(sv.Broken))
				continue
			}
			rounds := make([]string, len(sv.RoundRPS))
			for i, v := range sv.RoundRPS {
				rounds[i] = thousands(v)
			}
			share := "—"
			if v, ok := ratio(&sv, ceiling); ok {
				share = fmt.Sprintf("%.2f", v)
			}
			errs := thousands(float64(sv.Errors))
			if sv.Errors > 0 && sv.FirstError != "" {
				errs += " (" + mdEscape(sv.FirstError) + ")"
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", label, thousands(sv.Median()), strings.Join(rounds, " / "),
				share, ms(sv.P50), ms(sv.P99), errs, answer)
		}
		var ratios []string
		if v, ok := ratio(s.Server(ServerAPIStack), s.Server(ServerPrism)); ok {
			ratios = append(ratios, fmt.Sprintf("apistack / Prism: **%.2fx**", v))
		}
		if v, ok := ratio(s.Server(ServerValidate), s.Server(ServerAPIStack)); ok {
			ratios = append(ratios, fmt.Sprintf("`--validate-responses` / off: **%.2f**", v))
		}
		if len(ratios) > 0 {
			p("\n%s.\n", strings.Join(ratios, "; "))
		}
		if s.Note != "" {
			p("\n%s\n", s.Note)
		}
	}
	p("\n## apistack processes\n\n| process | VmRSS after the run | lines logged at ERROR | responses logged as breaking the spec |\n|---|---:|---:|---:|\n")
	for _, m := range r.Memory {
		p("| %s | %.1f MiB | %d | %d |\n", m.Process, float64(m.RSS)/(1<<20), m.ErrorLogs, m.Violations)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape keeps text inside one table cell.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if r := []rune(s); len(r) > 400 {
		s = string(r[:400]) + "…"
	}
	return s
}
