package fax

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/benchproc"
	"github.com/apistack/apistack/servers/internal/testdb"
)

// BenchmarkWebhookThroughput commits 10,000 events (1,000 faxes of 10 events)
// to the outbox in transactions of 500, as fast as it can, and measures their
// delivery to a local receiver that verifies every signature (clients/fax's
// handler): events per second, and the p50/p99 time from commit to receipt.
// In this burst the latencies are mostly time spent queued behind the
// events committed earlier. It runs on the run's backend
// (APISTACK_TEST_BACKEND) with one server, and on PostgreSQL also with three
// replicas sharing the database, which claim the faxes' events from each
// other.
func BenchmarkWebhookThroughput(b *testing.B) {
	for _, replicas := range []int{1, 3} {
		if replicas > 1 && testdb.Current() == testdb.SQLite {
			continue // replicas share a PostgreSQL database; SQLite has one writer process
		}
		b.Run(fmt.Sprintf("backend=%s/replicas=%d", testdb.Current(), replicas), func(b *testing.B) {
			r := deliverEvents(b, replicas, 1000, 10, 500, 0)
			b.ReportMetric(r.eventsPerSecond, "events/s")
			b.ReportMetric(r.p50Ms, "p50-ms")
			b.ReportMetric(r.p99Ms, "p99-ms")
		})
	}
}

// BenchmarkWebhookThroughputVersus compares one server on SQLite with three
// replicas on PostgreSQL sharing the database, in rounds that alternate
// between the two (a machine whose load changes slows both alike): each
// round delivers 5,000 events committed as BenchmarkWebhookThroughput
// commits them. It reports the median events/s of each and the median of
// the rounds' ratios (PostgreSQL / SQLite). Run with -benchtime 1x.
func BenchmarkWebhookThroughputVersus(b *testing.B) {
	const rounds = 3
	var sqlite, postgres, ratios, sqliteCPU, pgCPU, pgDBCPU, cpuRatios []float64
	for r := range rounds {
		b.Setenv(testdb.BackendVariable, string(testdb.SQLite))
		one := deliverEvents(b, 1, 500, 10, 500, 0)
		b.Setenv(testdb.BackendVariable, string(testdb.Postgres))
		three := deliverEvents(b, 3, 500, 10, 500, 0)
		b.Logf("round %d: sqlite, one server %.0f events/s, %.0f cpu-us/event; postgres, three replicas %.0f events/s, %.0f cpu-us/event + %.0f db-cpu-us/event",
			r+1, one.eventsPerSecond, one.cpuMicros, three.eventsPerSecond, three.cpuMicros, three.dbCPUMicros)
		sqlite, postgres, ratios = append(sqlite, one.eventsPerSecond), append(postgres, three.eventsPerSecond), append(ratios, three.eventsPerSecond/one.eventsPerSecond)
		sqliteCPU, pgCPU, pgDBCPU = append(sqliteCPU, one.cpuMicros), append(pgCPU, three.cpuMicros), append(pgDBCPU, three.dbCPUMicros)
		cpuRatios = append(cpuRatios, one.cpuMicros/(three.cpuMicros+three.dbCPUMicros))
	}
	b.ReportMetric(medianOf(sqlite), "sqlite-events/s")
	b.ReportMetric(medianOf(postgres), "postgres3-events/s")
	b.ReportMetric(medianOf(ratios), "ratio")
	b.ReportMetric(medianOf(sqliteCPU), "sqlite-cpu-us/event")
	b.ReportMetric(medianOf(pgCPU), "postgres3-cpu-us/event")
	b.ReportMetric(medianOf(pgDBCPU), "postgres3-db-cpu-us/event")
	// On a machine whose cores both setups share, and which they keep
	// busy, throughput goes as the inverse of the CPU an event costs: the
	// ratio of the costs (SQLite's over PostgreSQL's, the servers' and
	// PostgreSQL's together) is what the throughput ratio tends to there.
	b.ReportMetric(medianOf(cpuRatios), "cpu-bound-ratio")
}

func medianOf(vs []float64) float64 {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// BenchmarkWebhookLatency commits 2,000 events at a steady 500 events per
// second (one fax's 10 events per transaction, every 20ms), well under the
// sender's capacity, and reports the p50/p99 time from commit to receipt:
// the latency a receiver sees when the sender is not behind.
func BenchmarkWebhookLatency(b *testing.B) {
	r := deliverEvents(b, 1, 200, 10, 10, 20*time.Millisecond)
	b.ReportMetric(r.p50Ms, "p50-ms")
	b.ReportMetric(r.p99Ms, "p99-ms")
}

type deliveryResult struct {
	eventsPerSecond float64
	p50Ms, p99Ms    float64
	// cpuMicros is this process's CPU time per event (the servers, the
	// receiver verifying each signature, the commits of the events), and
	// dbCPUMicros PostgreSQL's (0 on SQLite).
	cpuMicros, dbCPUMicros float64
}

// deliverEvents commits faxes*perFax events in transactions of txSize, one
// transaction every interval (0: back to back), and waits until the
// receiver has verified every one, sent by replicas servers sharing the
// database.
func deliverEvents(b *testing.B, replicas, faxes, perFax, txSize int, interval time.Duration) deliveryResult {
	total := faxes * perFax
	h := newHarness(b, func(c *Config) {
		c.Clock = clock.System{}
		c.WebhookTransport = nil // no contract validation: measure the sender
		c.ValidateResponses = false
	})
	ctx := context.Background()
	servers := []*Server{h.srv}
	for i := 2; i <= replicas; i++ {
		cfg := h.cfg
		cfg.DB, cfg.ReplicaID = h.reopen(), fmt.Sprintf("replica-%d", i)
		srv, err := New(ctx, cfg)
		require.NoError(b, err)
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Run(rctx) }()
		b.Cleanup(func() { cancel(); <-done })
		servers = append(servers, srv)
	}

	var mu sync.Mutex
	committed := make(map[string]time.Time, total)
	received := make(map[string]time.Time, total)
	done := make(chan struct{})
	handler, err := faxwebhook.NewHandler(h.srv.Operator().WebhookPublicKey(), func(_ context.Context, e faxwebhook.Event) error {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, dup := received[e.ID]; !dup {
			received[e.ID] = now
			if len(received) == total {
				close(done)
			}
		}
		return nil
	})
	require.NoError(b, err)
	r := newBenchReceiver(b, handler)

	// Build the events first, so the clock runs only while they flow.
	batches := make([][]outboxEvent, 0, total/txSize)
	var batch []outboxEvent
	for range faxes {
		f := faxRow{ID: uuid.NewString(), AccountID: h.acct, ConnectionID: h.app, Direction: "outbound",
			From: h.from, To: "+14155550123", Status: string(faxapi.FaxStatusQueued), WebhookURL: r}
		for range perFax {
			ev, err := h.srv.newEvent(f, eventQueued, time.Now())
			require.NoError(b, err)
			batch = append(batch, ev)
			if len(batch) == txSize {
				batches, batch = append(batches, batch), nil
			}
		}
	}

	dbCPU := func() int64 {
		if testdb.Current() != testdb.Postgres {
			return 0
		}
		ns, err := benchproc.PostgresCPU(ctx, h.srv.store.db.SQL())
		require.NoError(b, err)
		return ns
	}
	cpu0, db0 := benchproc.ProcessCPU(), dbCPU()
	b.ResetTimer()
	start := time.Now()
	for i, evs := range batches {
		if interval > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		}
		tx, err := h.srv.store.db.BeginTx(ctx, nil)
		require.NoError(b, err)
		err = insertEvents(ctx, tx, evs)
		require.NoError(b, err)
		require.NoError(b, tx.Commit())
		at := time.Now()
		mu.Lock()
		for _, e := range evs {
			committed[e.EventID] = at
		}
		mu.Unlock()
		for _, srv := range servers {
			srv.wakeDelivery()
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("only %d of %d events arrived", len(received), total)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cpu1, db1 := benchproc.ProcessCPU(), dbCPU()

	mu.Lock()
	lat := make([]time.Duration, 0, total)
	for id, at := range received {
		lat = append(lat, at.Sub(committed[id]))
	}
	mu.Unlock()
	slices.Sort(lat)
	return deliveryResult{
		eventsPerSecond: float64(total) / elapsed.Seconds(),
		p50Ms:           float64(lat[len(lat)/2].Microseconds()) / 1000,
		p99Ms:           float64(lat[len(lat)*99/100].Microseconds()) / 1000,
		cpuMicros:       float64(cpu1-cpu0) / 1e3 / float64(total),
		dbCPUMicros:     float64(db1-db0) / 1e3 / float64(total),
	}
}

// newBenchReceiver serves handler on loopback and returns its URL.
func newBenchReceiver(b *testing.B, handler http.Handler) string {
	srv := httptest.NewServer(handler)
	b.Cleanup(srv.Close)
	return srv.URL + "/"
}

// BenchmarkClaimDueFaxes_Backlog claims a due step while an account has a
// backlog of due faxes (as a burst of sends leaves one: the simulator
// steps simPerAccount of an account's faxes at a time) beside nine other
// accounts with one due fax each, and releases the faxes claimed again, so
// every iteration claims from the same backlog. It reports the claim's time per
// iteration at each backlog size: a claim that reads only the faxes it
// may take costs the same at every size.
func BenchmarkClaimDueFaxes_Backlog(b *testing.B) {
	for _, backlog := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("faxes=%d", backlog), func(b *testing.B) {
			h := newHarness(b)
			ctx := context.Background()
			// Due in an hour by the harness's clock, so its running
			// simulator leaves them alone; claimed as of two hours on.
			at := h.clock.Now().Add(time.Hour)
			for i := range backlog {
				h.insertQueued(h.acct, h.app, at.Add(time.Duration(i)*time.Microsecond))
			}
			for i := range 9 {
				other := h.newTenant(fmt.Sprintf("other%d", i), fmt.Sprintf("+1312555%04d", 200+i))
				h.insertQueued(other.acct, other.app, at.Add(time.Duration(backlog+i)*time.Microsecond))
			}
			now := at.Add(time.Hour)
			// One of the backlog's faxes is being stepped, as in the
			// simulator: the account has room for one more.
			held, err := h.srv.store.claimDueFaxes(ctx, "elsewhere", now, now.Add(time.Hour), simPerAccount, 1)
			require.NoError(b, err)
			require.Len(b, held, 1)
			for b.Loop() {
				due, err := h.srv.store.claimDueFaxes(ctx, "bench", now, now.Add(time.Minute), simPerAccount, 4)
				require.NoError(b, err)
				require.Len(b, due, 4)
				for _, f := range due {
					require.NoError(b, h.srv.store.releaseFax(ctx, f.ID, "bench"))
				}
			}
		})
	}
}
