package pam_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/benchproc"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// BenchmarkReplicaWrites measures PAM's writes on PostgreSQL with 1 to 4
// replicas (pools of distinct names on one schema, as serve's replicas
// hold, each with its server) and 64 client identities (teams, each with a
// pam_admin service user and its key): token exchanges and group creates,
// 16 clients, client c on replica c mod R, request i as identity i mod 64;
// and token exchanges of one identity alone (exchange1identity: one key,
// one user, one team, whose rows every exchange's foreign-key checks lock).
// Rounds of each R are interleaved and every measure is the median of its
// rounds. Per request it reports, for each R (prefix rN-):
//
//   - req/s, and its ratio to one replica's (rN-scale);
//   - cpu-us/req: this process's CPU (the servers and the clients: on 2
//     cores the replicas cannot be apart), and db-cpu-us/req: PostgreSQL's
//     (its backends and workers);
//   - stmts/req: the statements the database ran (pg_stat_statements,
//     BEGIN and COMMIT included: each is a round trip unless pipelined);
//   - heard/req: the other replicas' commits each replica heard (each one
//     drops all its caches), summed over the replicas;
//   - lockwait and notifywait: the mean count of client backends waiting, at
//     a sample every 2 ms, on a heavyweight lock (Lock:*; a commit that
//     notifies takes the notification queue's, one for the whole cluster)
//     and on the notification queue's lightweight locks (LWLock:Notify*);
//     active: the mean count running a statement;
//   - multixacts/req: the multixacts PostgreSQL created (one each time a
//     transaction locks a row others hold a lock on: concurrent foreign-key
//     checks of one parent row).
//
// The statements of one request at R=max are logged. Run with
// -benchtime 1x on a PostgreSQL test run or not (it needs PostgreSQL).
func BenchmarkReplicaWrites(b *testing.B) {
	const replicas, identities, clients, rounds = 4, 64, 16, 5
	ctx := context.Background()
	url, schema := testdb.OpenShared(b, pamtest.Migrations)
	type replica struct {
		raw *sql.DB
		srv *pam.Server
		url string
	}
	reps := make([]replica, replicas)
	for i := range reps {
		raw, err := pgdb.Open(ctx, url, schema, pam.API.Migrations().Postgres)
		require.NoError(b, err)
		b.Cleanup(func() { _ = raw.Close() })
		srv, u := serveUnlimited(b, raw)
		reps[i] = replica{raw: raw, srv: srv, url: u}
	}
	type identity struct{ team, keyID, secret, token string }
	ids := make([]identity, identities)
	for i := range ids {
		name := fmt.Sprintf("team-%02d", i)
		_, err := reps[0].srv.Operator().CreateTeam(ctx, name)
		require.NoError(b, err)
		key, err := reps[0].srv.Operator().BootstrapServiceUser(ctx, name, "bot", "bot-group", []string{"pam_admin"}, 0)
		require.NoError(b, err)
		ids[i] = identity{team: name, keyID: key.KeyID, secret: key.KeySecret}
	}
	for i := range ids {
		ids[i].token = exchangeAt(b, reps[i%replicas].url, ids[i].team, ids[i].keyID, ids[i].secret)
	}
	for _, r := range reps {
		require.NoError(b, sqldb.Sync(ctx, r.raw))
	}
	monitor, err := sql.Open("pgx", url)
	require.NoError(b, err)
	b.Cleanup(func() { _ = monitor.Close() })
	monitor.SetMaxOpenConns(2)
	statsOK := true
	if err := benchproc.ResetStatements(ctx, monitor); err != nil {
		if !errors.Is(err, benchproc.ErrNoStatStatements) {
			b.Fatal(err)
		}
		b.Logf("no statement counts: %v", err)
		statsOK = false
	}

	type result struct {
		reqPerSec, cpu, dbCPU, stmts, heard, lockWait, notifyWait, active, multixacts float64
		statements                                                                    []benchproc.Statement
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var created atomic.Int64
	round := func(b *testing.B, n, r int, newReq func(base string, i int64) *http.Request, status int) result {
		var heardBefore uint64
		for _, rep := range reps[:r] {
			heardBefore += sqldb.HeardOn(rep.raw)
		}
		// The multixacts are read around the statement counts, so that
		// their checkpoints are not counted.
		mxBefore, err := benchproc.MultiXacts(ctx, monitor)
		require.NoError(b, err)
		if statsOK {
			require.NoError(b, benchproc.ResetStatements(ctx, monitor))
		}
		pgBefore, err := benchproc.PostgresCPU(ctx, monitor)
		require.NoError(b, err)
		cpuBefore := benchproc.ProcessCPU()
		sampler := benchproc.SampleWaits(monitor, 2*time.Millisecond)
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Value
		for c := range clients {
			base := reps[c%r].url
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= int64(n) || failed.Load() != nil {
						return
					}
					resp, err := client.Do(newReq(base, i))
					if err != nil {
						failed.Store(err.Error())
						return
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != status {
						failed.Store(fmt.Sprintf("status %d: %s", resp.StatusCode, body))
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		cpu := benchproc.ProcessCPU() - cpuBefore
		waits, err := sampler.Stop()
		require.NoError(b, err)
		if f := failed.Load(); f != nil {
			b.Fatalf("round on %d replicas: %s", r, f)
		}
		pgAfter, err := benchproc.PostgresCPU(ctx, monitor)
		require.NoError(b, err)
		var heard uint64
		for _, rep := range reps[:r] {
			// Every commit of the round heard before counting.
			require.NoError(b, sqldb.Sync(ctx, rep.raw))
			heard += sqldb.HeardOn(rep.raw)
		}
		res := result{
			reqPerSec: float64(n) / elapsed.Seconds(),
			cpu:       float64(cpu) / 1e3 / float64(n),
			dbCPU:     float64(pgAfter-pgBefore) / 1e3 / float64(n),
			heard:     float64(heard-heardBefore) / float64(n),
			active:    waits.Active,
		}
		for event, mean := range waits.Events {
			switch {
			case strings.HasPrefix(event, "Lock:"):
				res.lockWait += mean
			case strings.HasPrefix(event, "LWLock:Notify"):
				res.notifyWait += mean
			}
		}
		if statsOK {
			res.statements, err = benchproc.Statements(ctx, monitor)
			require.NoError(b, err)
			var calls int64
			for _, s := range res.statements {
				calls += s.Calls
			}
			res.stmts = float64(calls) / float64(n)
		}
		mxAfter, err := benchproc.MultiXacts(ctx, monitor)
		require.NoError(b, err)
		res.multixacts = float64(mxAfter-mxBefore) / float64(n)
		return res
	}
	ops := []struct {
		name   string
		n      int
		status int
		req    func(base string, i int64) *http.Request
	}{
		{"exchange", 1500, http.StatusOK, func(base string, i int64) *http.Request {
			id := ids[i%identities]
			body := fmt.Sprintf(`{"key_id":%q,"key_secret":%q}`, id.keyID, id.secret)
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/teams/"+id.team+"/service_token", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			return req
		}},
		{"exchange1identity", 1500, http.StatusOK, func(base string, _ int64) *http.Request {
			id := ids[0]
			body := fmt.Sprintf(`{"key_id":%q,"key_secret":%q}`, id.keyID, id.secret)
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/teams/"+id.team+"/service_token", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			return req
		}},
		{"create", 1000, http.StatusCreated, func(base string, i int64) *http.Request {
			id := ids[i%identities]
			body := fmt.Sprintf(`{"name":"new-%08d","roles":["end_user"]}`, created.Add(1))
			req, _ := http.NewRequest(http.MethodPost, base+"/v1/teams/"+id.team+"/groups", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+id.token)
			req.Header.Set("Content-Type", "application/json")
			return req
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			res := make([][]result, replicas+1)
			for range rounds {
				for r := 1; r <= replicas; r++ {
					res[r] = append(res[r], round(b, op.n, r, op.req, op.status))
				}
			}
			for r := 1; r <= replicas; r++ {
				med := func(f func(result) float64) float64 {
					vs := make([]float64, rounds)
					for i, x := range res[r] {
						vs[i] = f(x)
					}
					return medianFloat(vs)
				}
				p := fmt.Sprintf("r%d-", r)
				b.ReportMetric(med(func(x result) float64 { return x.reqPerSec }), p+"req/s")
				scale := make([]float64, rounds)
				for i := range rounds {
					scale[i] = res[r][i].reqPerSec / res[1][i].reqPerSec
				}
				b.ReportMetric(medianFloat(scale), p+"scale")
				b.ReportMetric(med(func(x result) float64 { return x.cpu }), p+"cpu-us/req")
				b.ReportMetric(med(func(x result) float64 { return x.dbCPU }), p+"db-cpu-us/req")
				b.ReportMetric(med(func(x result) float64 { return x.heard }), p+"heard/req")
				b.ReportMetric(med(func(x result) float64 { return x.lockWait }), p+"lockwait")
				b.ReportMetric(med(func(x result) float64 { return x.notifyWait }), p+"notifywait")
				b.ReportMetric(med(func(x result) float64 { return x.active }), p+"active")
				b.ReportMetric(med(func(x result) float64 { return x.multixacts }), p+"multixacts/req")
				if statsOK {
					b.ReportMetric(med(func(x result) float64 { return x.stmts }), p+"stmts/req")
				}
			}
			last := res[replicas][rounds-1]
			for _, s := range last.statements {
				b.Logf("%6.2f calls/req %7.1f us/call  %s", float64(s.Calls)/float64(op.n), s.Millis*1e3/float64(s.Calls), s.Query)
			}
		})
	}
}

// exchangeAt trades a service key for a token at the PAM server at base.
func exchangeAt(t testing.TB, base, team, keyID, secret string) string {
	body := fmt.Sprintf(`{"key_id":%q,"key_secret":%q}`, keyID, secret)
	resp, err := http.Post(base+"/v1/teams/"+team+"/service_token", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(data))
	_, tok, ok := strings.Cut(string(data), `"bearer_token":"`)
	require.True(t, ok, string(data))
	tok, _, _ = strings.Cut(tok, `"`)
	return tok
}

func medianFloat(vs []float64) float64 {
	vs = slices.Clone(vs)
	sort.Float64s(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}
