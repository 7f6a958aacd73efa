package apistacktest_test

import (
	"context"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/apistacktest"
	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/storage"
)

func TestStart_EveryClientReachesItsAPIWithTheStacksCredentials(t *testing.T) {
	t.Parallel()
	st := apistacktest.Start(t, apistacktest.Options{})
	ctx := context.Background()

	seeded := st.SeedTeam(t, "", 3, nil)
	var groups []string
	for g, err := range st.PAM.ListGroups(ctx, nil) {
		require.NoError(t, err)
		groups = append(groups, g.Name)
	}
	for _, g := range seeded.Groups {
		assert.Contains(t, groups, g)
	}

	st.SeedMenu(t, 20, 1)
	n := 0
	for _, err := range st.Restaurant.ListMenuItems(ctx, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 20, n)

	require.NoError(t, st.Storage.PutLifecycle(ctx, st.Credentials.Storage.Bucket,
		storage.Configuration(storage.ExpireAfterDays("logs", "logs/", 30))))
	cfg, err := st.Storage.GetLifecycle(ctx, st.Credentials.Storage.Bucket)
	require.NoError(t, err)
	require.Len(t, cfg.Rules, 1)

	f, err := st.Fax.SendFax(ctx, faxclient.SendFaxParams{ConnectionID: st.Credentials.Fax.ConnectionID,
		To: "+13125550800", From: st.Credentials.Fax.From, MediaURL: st.SampleFaxURL})
	require.NoError(t, err)
	_, err = st.Inbox.Wait(ctx, f.ID.String(), "fax.queued")
	require.NoError(t, err)
	assert.Empty(t, st.Violations())
}

// TestStart_FiftyStacksInParallel starts 50 stacks side by side, each used
// at once: every one has its own state.
func TestStart_FiftyStacksInParallel(t *testing.T) {
	const n = 50
	var mu sync.Mutex
	var starts []time.Duration
	began := time.Now()
	t.Run("stacks", func(t *testing.T) {
		for i := range n {
			t.Run("", func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				st := apistacktest.Start(t, apistacktest.Options{})
				took := time.Since(start)
				mu.Lock()
				starts = append(starts, took)
				mu.Unlock()
				ctx := context.Background()
				_, err := st.PAM.CreateGroup(ctx, "only-here")
				require.NoError(t, err, "stack %d", i)
				count := 0
				for g, err := range st.PAM.ListGroups(ctx, nil) {
					require.NoError(t, err)
					if g.Name == "only-here" {
						count++
					}
				}
				assert.Equal(t, 1, count, "each stack sees its own group only")
			})
		}
	})
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	if len(starts) == n {
		t.Logf("50 parallel stacks: all done in %v; start time median %v, max %v", time.Since(began).Round(time.Millisecond), starts[n/2].Round(time.Millisecond), slices.Max(starts).Round(time.Millisecond))
	}
}

// BenchmarkStart measures the start of one stack (its stop excluded from
// the median it reports: median-ms is the median start time of the
// iterations, cpu-ms the process CPU time per start and stop).
func BenchmarkStart(b *testing.B) {
	benchOpen(b, func() *apistacktest.Stack {
		st, err := apistacktest.New(apistacktest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return st
	})
}

// BenchmarkConnect measures Connect on a running stack (here one started in
// this process, serving over loopback HTTP as `apistack serve` does): the
// sandbox created, its clients signed in and its webhook log followed. It
// reports the median connect (median-ms) and the process's CPU time per
// connect and close (cpu-ms/op), the running stack's share included.
func BenchmarkConnect(b *testing.B) {
	host, err := apistacktest.New(apistacktest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// Connect's own clean-ups (each sandbox's violations read) run
	// before this one: the host stops last.
	b.Cleanup(host.Close)
	benchOpen(b, func() *apistacktest.Stack {
		return apistacktest.Connect(b, host.AdminURL, host.SandboxCreatorToken())
	})
}

// benchOpen times open once per iteration, closing each stack after (its
// close left out of the median): it reports the median open (median-ms)
// and the process's CPU time per open and close (cpu-ms/op).
func benchOpen(b *testing.B, open func() *apistacktest.Stack) {
	var opens []time.Duration
	cpu0 := cpuTime()
	for b.Loop() {
		t0 := time.Now()
		st := open()
		opens = append(opens, time.Since(t0))
		st.Close()
	}
	cpu := cpuTime() - cpu0
	slices.Sort(opens)
	b.ReportMetric(float64(opens[len(opens)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(opens)), "cpu-ms/op")
}

// cpuTime is the CPU time the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
