package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	restaurantserver "github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/stack"
)

// largeFixture is the fixture of the benchmarks: 100 PAM groups, 50
// delivered faxes (with their events) and a restaurant configuration as
// large as the demo restaurant's.
func largeFixture(tb testing.TB) string {
	tb.Helper()
	var groups, faxes []string
	for i := range 100 {
		groups = append(groups, fmt.Sprintf(`{"name": "group-%03d", "roles": ["end_user"]}`, i))
	}
	for i := range 50 {
		faxes = append(faxes, fmt.Sprintf(`{"application": "app", "from": "main", "to": "+1312555%04d", "status": "delivered", "pages": %d}`, 200+i, 1+i%5))
	}
	doc, err := json.Marshal(restaurantserver.Demo(restaurantserver.DemoOptions{MenuItems: stack.DemoRestaurantMenuItems, Seed: 1}))
	require.NoError(tb, err)
	return `{"pam": {"groups": [` + strings.Join(groups, ",") + `]},
		"fax": {"applications": [{"name": "app"}], "numbers": [{"name": "main", "application": "app"}], "faxes": [` + strings.Join(faxes, ",") + `]},
		"restaurant": ` + string(doc) + `}`
}

// timed runs f and returns how long it took.
func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

// medians reports the median and 90th percentile of took as name.
func report(b *testing.B, name string, took []time.Duration) float64 {
	slices.Sort(took)
	med := ms(took[len(took)/2])
	b.ReportMetric(med, name+"-ms-median")
	b.ReportMetric(ms(took[len(took)*9/10]), name+"-ms-p90")
	return med
}

// BenchmarkSandboxFork measures POST /sandboxes {"snapshot": …} over HTTP
// of a snapshot of a sandbox made from largeFixture (its faxes delivered),
// on the run's backend, in rounds interleaved with plain creations on the
// same stack: the medians and 90th percentiles of both, and the ratio of
// the medians (targets: a fork's median under 50 ms on SQLite, 100 ms on
// PostgreSQL). Each fork is deleted after it is measured.
func BenchmarkSandboxFork(b *testing.B) {
	e := start(b, envOptions{})
	ctx := context.Background()
	orig := e.createFixture(b, largeFixture(b))
	e.driveUntil(b, orig, "the fixture's events delivered", func(p *sandboxapi.WebhookLogPage) bool {
		return len(p.Pending) == 0 && len(p.Data) >= 200
	})
	snap := snapshot(b, orig)
	var forks, creates []time.Duration
	for b.Loop() {
		forks = append(forks, timedCreate(b, e, func() (*sandboxapi.CreateSandboxResponse, error) {
			return e.creator.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{Snapshot: &snap.Id})
		}))
		creates = append(creates, timedCreate(b, e, func() (*sandboxapi.CreateSandboxResponse, error) {
			return e.creator.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{})
		}))
	}
	fork, create := report(b, "fork", forks), report(b, "create", creates)
	b.ReportMetric(fork/create, "fork/create")
}

// BenchmarkSandboxFromFixture measures POST /sandboxes {"fixture": …} over
// HTTP with largeFixture, on the run's backend, in rounds interleaved with
// plain creations on the same stack (target: a median under 200 ms). Each
// sandbox is deleted after it is measured.
func BenchmarkSandboxFromFixture(b *testing.B) {
	e := start(b, envOptions{})
	ctx := context.Background()
	body := `{"clock": "frozen", "fixture": ` + largeFixture(b) + `}`
	var fixtures, creates []time.Duration
	for b.Loop() {
		fixtures = append(fixtures, timedCreate(b, e, func() (*sandboxapi.CreateSandboxResponse, error) {
			return e.createFrom(b, body)
		}))
		creates = append(creates, timedCreate(b, e, func() (*sandboxapi.CreateSandboxResponse, error) {
			return e.creator.CreateSandboxWithResponse(ctx, sandboxapi.CreateSandboxRequest{})
		}))
	}
	fixture, create := report(b, "fixture", fixtures), report(b, "create", creates)
	b.ReportMetric(fixture/create, "fixture/create")
}

// timedCreate times create, which must create a sandbox (201), and then
// deletes that sandbox, outside the time, so that every round starts from
// the same stack.
func timedCreate(b *testing.B, e *env, create func() (*sandboxapi.CreateSandboxResponse, error)) time.Duration {
	b.Helper()
	var id string
	d := timed(func() {
		resp, err := create()
		require.NoError(b, err)
		require.Equal(b, http.StatusCreated, resp.StatusCode(), string(resp.Body))
		id = resp.JSON201.Id
	})
	require.NoError(b, e.st.Sandboxes.Delete(context.Background(), id))
	return d
}
