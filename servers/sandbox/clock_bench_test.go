package sandbox_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/stack"
)

// advanceFaxes is how many faxes BenchmarkSandboxAdvance has in flight.
const advanceFaxes = 100

// BenchmarkSandboxAdvance measures an advance of a frozen sandbox with 100
// faxes queued to a normal test number: the time from POST
// /sandboxes/{id}/clock {"advance": "10m"} until it answers, by which every
// fax is delivered and every one of their events delivered to the inbox
// (checked after each run: none pending). It reports the median and the
// 90th percentile (target: under 1 s), on the run's backend.
func BenchmarkSandboxAdvance(b *testing.B) {
	e := start(b, envOptions{})
	ctx := context.Background()
	var took []time.Duration
	for b.Loop() {
		sb := e.create(b, sandboxapi.CreateSandboxRequest{Clock: ptr(sandboxapi.ClockModeFrozen)})
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for range advanceFaxes {
			wg.Add(1)
			sem <- struct{}{}
			go func() { defer func() { <-sem; wg.Done() }(); e.sendFax(b, sb, "+13125550800") }()
		}
		wg.Wait()
		d := "10m"
		t0 := time.Now()
		resp, err := sb.api.AdvanceSandboxClockWithResponse(ctx, sb.Id, sandboxapi.ClockChange{Advance: &d})
		took = append(took, time.Since(t0))
		testkit.Answered(b, http.StatusOK, resp, err)
		pending, delivered := events(b, e, sb.Id)
		require.Equal(b, 0, pending, "events not delivered when the advance answered")
		require.Equal(b, 4*advanceFaxes, delivered)
	}
	slices.Sort(took)
	b.ReportMetric(ms(took[len(took)/2]), "ms-median")
	b.ReportMetric(ms(took[len(took)*9/10]), "ms-p90")
}

// events counts the pending and the delivered events of the faxes of
// sandbox id.
func events(t testing.TB, e *env, id string) (pending, delivered int) {
	t.Helper()
	// id is a sandbox id (sbx- and hex), safe to quote.
	err := e.st.DB(stack.Fax).QueryRow(fmt.Sprintf(`SELECT
		COALESCE(SUM(CASE WHEN o.delivered_at IS NULL AND o.abandoned_at IS NULL THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN o.delivered_at IS NOT NULL THEN 1 ELSE 0 END), 0)
		FROM outbox AS o JOIN faxes AS f ON f.id = o.fax_id JOIN accounts AS a ON a.id = f.account_id
		WHERE a.name = '%s'`, id)).Scan(&pending, &delivered)
	require.NoError(t, err)
	return pending, delivered
}
