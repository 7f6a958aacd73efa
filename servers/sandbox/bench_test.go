package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
)

// BenchmarkSandboxCreate measures POST /sandboxes over HTTP, one at a time,
// on the run's backend (APISTACK_TEST_BACKEND=postgres for PostgreSQL): the
// median and the 90th percentile of the creations (targets: a median under
// 25 ms on SQLite, 60 ms on PostgreSQL).
func BenchmarkSandboxCreate(b *testing.B) {
	e := start(b, envOptions{})
	ctx := context.Background()
	var took []time.Duration
	for b.Loop() {
		t0 := time.Now()
		resp, err := e.creator.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{})
		took = append(took, time.Since(t0))
		require.NoError(b, err)
		require.Equal(b, http.StatusCreated, resp.StatusCode(), string(resp.Body))
	}
	slices.Sort(took)
	b.ReportMetric(ms(took[len(took)/2]), "ms-median")
	b.ReportMetric(ms(took[len(took)*9/10]), "ms-p90")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkJournalCost measures the PAM list throughput of a sandbox's
// credentials with the journal on and off, in alternating rounds of the
// same run on the same stack, and reports the ratio of the median
// throughputs and the median of the ratios of adjacent rounds (target: at
// least 0.9). Each round sends its requests from concurrent clients for a
// fixed time.
func BenchmarkJournalCost(b *testing.B) {
	e := start(b, envOptions{pamRateLimit: 1 << 30})
	ctx := context.Background()
	sb := e.create(b, sandboxapi.CreateSandboxRequest{})
	for i := range 20 {
		_, err := sb.pam.CreateGroup(ctx, fmt.Sprintf("group-%02d", i))
		require.NoError(b, err)
	}
	token, err := sb.pam.Token(ctx)
	require.NoError(b, err)
	url := sb.Credentials.Pam.BaseUrl + "/v1/teams/" + sb.Credentials.Pam.Team + "/groups?count=20"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	list := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("list: %d", resp.StatusCode)
		}
		return nil
	}
	const workers, round = 4, 300 * time.Millisecond
	// throughput runs workers for one round and returns requests per
	// second and this process's CPU time per request.
	throughput := func() (float64, time.Duration) {
		var n atomic.Int64
		cpu0 := cpuTime(b)
		deadline := time.Now().Add(round)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					if err := list(); err != nil {
						b.Error(err)
						return
					}
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(n.Load()) / round.Seconds(), (cpuTime(b) - cpu0) / time.Duration(max(n.Load(), 1))
	}
	journal := e.st.Sandboxes.Journal()
	defer journal.SetEnabled(true)
	throughput() // warm up
	journalOnOff(b, func(on bool) (float64, time.Duration) {
		journal.SetEnabled(on)
		return throughput()
	})
	journal.SetEnabled(true)
	// The journal holds what the rounds with it on sent.
	entries := journal2(b, sb)
	require.NotEmpty(b, entries)
}

// journalOnOff runs b's iterations as pairs of rounds, the journal on and
// off, and reports the median throughputs, their ratio, the median of the
// pairs' ratios (each pair ran under the same load: the machine's load
// moves the throughput more than the journal does) and the median ratio of
// this process's CPU time per request, off over on (what the throughput
// ratio comes to on a machine the benchmark has to itself, where the
// requests are bound by the CPU, and much less moved by other processes'
// load than the throughput; on PostgreSQL it leaves out the database
// server's work). round runs one round, the journal on or off, and returns
// requests per second and this process's CPU time per request.
func journalOnOff(b *testing.B, round func(on bool) (float64, time.Duration)) {
	var on, off, ratios, cpuRatios []float64
	for i := 0; b.Loop(); i++ {
		// Each pair of rounds runs in turn on-off and off-on, so a load
		// that rises or falls during a pair weighs on both sides alike.
		var x, y float64
		var cx, cy time.Duration
		if i%2 == 0 {
			x, cx = round(true)
			y, cy = round(false)
		} else {
			y, cy = round(false)
			x, cx = round(true)
		}
		on, off, ratios = append(on, x), append(off, y), append(ratios, x/y)
		cpuRatios = append(cpuRatios, float64(cy)/float64(cx))
	}
	b.StopTimer()
	median := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	b.ReportMetric(median(on), "req/s-journal-on")
	b.ReportMetric(median(off), "req/s-journal-off")
	b.ReportMetric(median(on)/median(off), "on/off")
	b.ReportMetric(median(ratios), "on/off-paired")
	b.ReportMetric(median(cpuRatios), "cpu-off/on")
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func journal2(b *testing.B, sb *box) []sandboxapi.JournalEntry {
	return journal(b, sb, &sandboxapi.ListSandboxRequestsParams{Operation: ptr("ListGroups"), Limit: ptr(10)})
}
