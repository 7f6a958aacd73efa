package benchhttp

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleReport() Report {
	return Report{
		Machine: Machine{CPUs: 2, CPUModel: "Test CPU", GoVersion: "go version go1.26.8 linux/amd64", Date: time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC),
			LoadBefore: "1.00 2.00 3.00", LoadAfter: "4.00 5.00 6.00", Commit: "1c58a04aa0bb (main)"},
		Duration: 5 * time.Second, Warmup: time.Second, Rounds: 3, Prism: "5.16.0",
		Scenarios: []ScenarioResult{
			{
				Name: "pam-list", Title: "PAM: list 100 groups", Request: "GET /v1/teams/demo/groups", Connections: 16, Headline: true, API: "pam",
				Servers: []ServerResult{
					{Server: ServerCeiling, Status: 200, ResponseBytes: 10300, RoundRPS: []float64{27120, 42747, 25017}, Requests: 474420, P50: 500 * time.Microsecond, P99: 2 * time.Millisecond},
					{Server: ServerAPIStack, Status: 200, ResponseBytes: 10300, RoundRPS: []float64{2698, 1890, 2162}, Requests: 33750, P50: 7 * time.Millisecond, P99: 41500 * time.Microsecond},
					{Server: ServerValidate, Status: 200, ResponseBytes: 10300, RoundRPS: []float64{956, 1651, 1374}, Requests: 19905},
					{Server: ServerPrism, Status: 200, ResponseBytes: 130, RoundRPS: []float64{416, 733, 606}, Requests: 8775},
				},
			},
			{
				Name: "pam-create", Title: "PAM: create a group", Request: "POST /v1/teams/demo/groups", Connections: 16, Write: true,
				Note: "Unique names.",
				Servers: []ServerResult{
					{Server: ServerCeiling, Status: 201, RoundRPS: []float64{20000}},
					{Server: ServerAPIStack, Status: 201, RoundRPS: []float64{800, 900}, Errors: 3, FirstError: "status 409", P99: 30 * time.Millisecond},
				},
			},
			{
				Name: "storage-put", Title: "Storage: PUT", Request: "PUT /demo-bucket?lifecycle", Connections: 16, Headline: true, API: "storage",
				Servers: []ServerResult{
					{Server: ServerCeiling, Status: 200, RoundRPS: []float64{9000}},
					{Server: ServerAPIStack, Status: 200, RoundRPS: []float64{700}},
					{Server: ServerPrism, Status: 400, Broken: "answered 400, rejecting the request: Request body must be object | twice"},
				},
			},
			{
				Name: "fax-list", Title: "Fax: list", Request: "GET /v2/faxes", Connections: 16, Headline: true, API: "fax",
				Servers: []ServerResult{
					{Server: ServerAPIStack, Status: 200, RoundRPS: []float64{4000}},
					{Server: ServerPrism, Status: 200, RoundRPS: []float64{500}},
				},
			},
			{
				Name: "fax-send", Title: "Fax: send", Request: "POST /v2/faxes", Connections: 16, Headline: true, API: "fax",
				Servers: []ServerResult{
					{Server: ServerAPIStack, Status: 202, RoundRPS: []float64{600}},
					{Server: ServerPrism, Status: 202, RoundRPS: []float64{500}},
				},
			},
		},
		Memory: []MemoryResult{{Process: "apistack serve", RSS: 60 << 20}, {Process: "apistack serve --validate-responses", RSS: 120 << 20, ErrorLogs: 2, Violations: 2}},
	}
}

func TestServerResult_MedianOfRounds(t *testing.T) {
	cases := []struct {
		rounds []float64
		want   float64
	}{
		{[]float64{27120, 42747, 25017}, 27120},
		{[]float64{2, 1}, 1.5},
		{[]float64{5}, 5},
		{nil, 0},
	}
	for _, c := range cases {
		s := ServerResult{RoundRPS: c.rounds}
		assert.Equal(t, c.want, s.Median(), "%v", c.rounds)
	}
	assert.Zero(t, (&ServerResult{RoundRPS: []float64{3}, Broken: "x"}).Median(), "a broken server has no rate")
	assert.Zero(t, (*ServerResult)(nil).Median())
}

func TestReport_TargetsOfTheIssue(t *testing.T) {
	got := map[string]TargetCheck{}
	for _, c := range sampleReport().Targets() {
		got[c.Target] = c
	}
	want := map[string]TargetCheck{
		"PAM list ≥ 0.25 of the ceiling":                                    {Measured: "0.08", Outcome: Fail},
		"restaurant list ≥ 0.25 of the ceiling":                             {Measured: "—", Outcome: NotMeasured},
		"PAM list with --validate-responses ≥ 0.8 of without":               {Measured: "0.64", Outcome: Fail},
		"pam: main list or send ≥ 3x Prism":                                 {Measured: "pam-list 3.57x", Outcome: Pass},
		"storage: main list or send ≥ 3x Prism":                             {Measured: "storage-put: Prism mock broken", Outcome: NotMeasured},
		"fax: main list or send ≥ 3x Prism":                                 {Measured: "fax-list 8.00x, fax-send 1.20x", Outcome: Pass},
		"PAM: create a group: 0 errors and p99 < 50 ms":                     {Measured: "3 errors, p99 30.0 ms", Outcome: Fail},
		"apistack serve VmRSS after the run < 100 MiB":                      {Measured: "60.0 MiB", Outcome: Pass},
		"apistack serve --validate-responses VmRSS after the run < 100 MiB": {Measured: "120.0 MiB", Outcome: Fail},
	}
	require.Len(t, got, len(want))
	for target, w := range want {
		w.Target = target
		assert.Equal(t, w, got[target])
	}
}

func TestReport_WriteMarkdown(t *testing.T) {
	var b strings.Builder
	require.NoError(t, sampleReport().WriteMarkdown(&b))
	md := b.String()
	for _, line := range []string{
		"- Date: 2026-11-23 20:00 UTC",
		"- CPUs: 2 (`nproc`), Test CPU",
		"- Prism: @stoplight/prism-cli 5.16.0",
		"- Source measured: commit 1c58a04aa0bb (main)",
		"- Load average (1, 5, 15 min, `/proc/loadavg`): 1.00 2.00 3.00 before the run, 4.00 5.00 6.00 after",
		"| PAM list ≥ 0.25 of the ceiling | 0.08 | FAIL |",
		"| fax: main list or send ≥ 3x Prism | fax-list 8.00x, fax-send 1.20x | pass |",
		"### PAM: list 100 groups (`pam-list`)",
		"| ceiling (bare echo, recorded answer) | 27,120 | 27,120 / 42,747 / 25,017 | 1.00 | 0.50 | 2.00 | 0 | 200, 10,300 B |",
		"| apistack serve | 2,162 | 2,698 / 1,890 / 2,162 | 0.08 | 7.00 | 41.5 | 0 | 200, 10,300 B |",
		"| Prism mock | 606 | 416 / 733 / 606 | 0.02 | 0.00 | 0.00 | 0 | 200, 130 B (its example) |",
		"apistack / Prism: **3.57x**; `--validate-responses` / off: **0.64**.",
		"| apistack serve | 850 | 800 / 900 | 0.04 | 0.00 | 30.0 | 3 (status 409) | 201, 0 B |",
		"Unique names.",
		"| Prism mock | broken | — | — | — | — | — | answered 400, rejecting the request: Request body must be object \\| twice |",
		"| apistack serve --validate-responses | 120.0 MiB | 2 | 2 |",
	} {
		assert.Contains(t, md, line+"\n")
	}
	assert.Equal(t, 5, strings.Count(md, "\n### "), "a table per scenario")
}

func TestFormatting(t *testing.T) {
	assert.Equal(t, "0", thousands(0))
	assert.Equal(t, "999", thousands(999))
	assert.Equal(t, "1,000", thousands(1000))
	assert.Equal(t, "27,120", thousands(27119.6))
	assert.Equal(t, "1,234,567", thousands(1234567))
	assert.Equal(t, "0.25", ms(250*time.Microsecond))
	assert.Equal(t, "41.5", ms(41500*time.Microsecond))
	assert.Equal(t, "1393", ms(1393*time.Millisecond))
}

func TestTail_KeepsTheEndAndCountsMarkedLines(t *testing.T) {
	tl := &tail{markers: []string{logError, logViolation}}
	_, _ = tl.Write([]byte("time=1 level=INFO msg=started\n"))
	_, _ = tl.Write([]byte("time=2 level=ERROR msg=\"response breaks the spec\" status=200\ntime=3 level=ERROR msg=other\n"))
	_, _ = tl.Write([]byte(strings.Repeat("x", tailSize)))
	assert.Equal(t, 2, tl.count(logError))
	assert.Equal(t, 1, tl.count(logViolation))
	assert.Zero(t, tl.count("unknown"))
	assert.Len(t, tl.String(), tailSize, "only the last bytes are kept")
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tapistack\nVmPeak:\t  900000 kB\nVmRSS:\t   58064 kB\nThreads:\t8\n"
	rss, err := parseVmRSS(status)
	require.NoError(t, err)
	assert.Equal(t, int64(58064*1024), rss)
	_, err = parseVmRSS("Name:\tx\n")
	assert.Error(t, err)
	_, err = parseVmRSS("VmRSS:\t12 MB\n")
	assert.Error(t, err)
}

func TestCPUProfilePath(t *testing.T) {
	assert.Equal(t, "/p/apistack.pprof", CPUProfilePath("/p", ServerAPIStack))
	assert.Equal(t, "/p/apistack-validate-responses.pprof", CPUProfilePath("/p", ServerValidate))
	h := &harness{cfg: Config{CPUProfileDir: "/p"}}
	assert.Equal(t, []string{"--cpu-profile", "/p/apistack.pprof"}, h.profileArgs(ServerAPIStack))
	assert.Nil(t, (&harness{}).profileArgs(ServerAPIStack), "no profile unless asked")
}
