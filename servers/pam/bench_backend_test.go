package pam_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/benchproc"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// The backend benchmarks compare one PAM server on SQLite with one on
// PostgreSQL (the throwaway cluster of testdb, or APISTACK_TEST_POSTGRES_URL),
// each as `apistack serve` runs it: request validation on, the default
// configuration. On PostgreSQL the server takes its database to be shared
// with other replicas: it keeps its caches (token, roles, list pages,
// rendered pages, the maintenance switch) while it hears the other
// replicas' commits, and spends from the rate limit in the database on every
// request; on SQLite all of that is in the process. The ratio is what
// scaling out costs one replica. Besides req/s each reports the process's
// CPU time per request (user+sys, clients included: they are in the same
// process) and allocations per request.

// backendServer starts a PAM server on a fresh database of backend with team
// acme, a pam_admin service user and 150 groups, and returns its URL and a
// bearer token.
func backendServer(b *testing.B, backend testdb.Backend) (baseURL, token string) {
	return backendServerOn(b, testdb.OpenOn(b, backend, pamtest.Migrations))
}

// backendServerOn is backendServer on db.
func backendServerOn(b *testing.B, db *sql.DB) (baseURL, token string) {
	_, baseURL, token = startBackendServer(b, db)
	return baseURL, token
}

// serveUnlimited serves a PAM server on db, its rate limit out of the way,
// until t ends.
func serveUnlimited(t testing.TB, db *sql.DB) (*pam.Server, string) {
	srv, err := pam.New(context.Background(), pam.Config{Deps: pam.Deps{DB: db, Logger: slog.New(slog.DiscardHandler)}, Settings: pam.Settings{RateLimit: 1 << 30}})
	require.NoError(t, err)
	h, err := srv.Handler()
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return srv, hs.URL
}

// startBackendServer is backendServerOn, returning the server too.
func startBackendServer(t testing.TB, db *sql.DB) (srv *pam.Server, baseURL, token string) {
	ctx := context.Background()
	srv, url := serveUnlimited(t, db)
	_, err := srv.Operator().CreateTeam(ctx, "acme")
	require.NoError(t, err)
	key, err := srv.Operator().BootstrapServiceUser(ctx, "acme", "bot", "bot-group", []string{"pam_admin"}, 0)
	require.NoError(t, err)
	for i := range 150 {
		require.NoError(t, srv.Operator().CreateTeamGroup(ctx, "acme", fmt.Sprintf("g-%04d", i), nil))
	}
	api, err := pamapi.NewClientWithResponses(url)
	require.NoError(t, err)
	tok, err := api.IssueServiceTokenWithResponse(ctx, "acme",
		pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.KeyID, KeySecret: key.KeySecret})
	require.NoError(t, err)
	require.NotNil(t, tok.JSON200, string(tok.Body))
	return srv, url, tok.JSON200.BearerToken
}

// teamTokens creates n teams, team-00..., each with a pam_admin service
// user, on srv served at baseURL, and returns a bearer token of each.
func teamTokens(t testing.TB, srv *pam.Server, baseURL string, n int) []string {
	ctx := context.Background()
	api, err := pamapi.NewClientWithResponses(baseURL)
	require.NoError(t, err)
	tokens := make([]string, n)
	for i := range tokens {
		name := fmt.Sprintf("team-%02d", i)
		_, err = srv.Operator().CreateTeam(ctx, name)
		require.NoError(t, err)
		key, err := srv.Operator().BootstrapServiceUser(ctx, name, "bot", "bot-group", []string{"pam_admin"}, 0)
		require.NoError(t, err)
		tok, err := api.IssueServiceTokenWithResponse(ctx, name,
			pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.KeyID, KeySecret: key.KeySecret})
		require.NoError(t, err)
		require.NotNil(t, tok.JSON200, string(tok.Body))
		tokens[i] = tok.JSON200.BearerToken
	}
	return tokens
}

// runClients runs b.N requests made by newReq from 16 concurrent clients
// (parallelism 8 on 2 cores), each expecting status and, for a body, at
// least minBytes; it reports req/s.
func runClients(b *testing.B, newReq func() *http.Request, status int, minBytes int64) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(8)
	b.ReportAllocs()
	cpu := cpuTime(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Do(newReq())
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != status || n < minBytes {
				b.Errorf("status %d, %d bytes", resp.StatusCode, n)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-us/op")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var backends = []testdb.Backend{testdb.SQLite, testdb.Postgres}

// BenchmarkBackendListGroups: the read path, 16 clients listing a page of
// 100 groups.
func BenchmarkBackendListGroups(b *testing.B) {
	for _, backend := range backends {
		b.Run(string(backend), func(b *testing.B) {
			base, tok := backendServer(b, backend)
			benchListGroups(b, base, tok)
		})
	}
}

// benchListGroups runs 16 clients listing a page of 100 groups of the
// server at base, with the token tok.
func benchListGroups(b *testing.B, base, tok string) {
	url := base + "/v1/teams/acme/groups?count=100"
	runClients(b, func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		return req
	}, http.StatusOK, 5000)
}

// BenchmarkBackendListWhileExchanging: a mixed load, 16 clients whose
// every fifth request exchanges a key for a token and the others list a
// page of 100 groups, as services that sign in now and then do. A token
// insert drops no cached list page (QuietExecContext); were it to, every
// exchange would make the next lists read and render their page again.
func BenchmarkBackendListWhileExchanging(b *testing.B) {
	for _, backend := range backends {
		b.Run(string(backend), func(b *testing.B) {
			srv, base, tok := startBackendServer(b, testdb.OpenOn(b, backend, pamtest.Migrations))
			key, err := srv.Operator().BootstrapServiceUser(context.Background(), "acme", "signer", "signer-group", nil, 0)
			require.NoError(b, err)
			body := fmt.Sprintf(`{"key_id":%q,"key_secret":%q}`, key.KeyID, key.KeySecret)
			list := base + "/v1/teams/acme/groups?count=100"
			var n atomic.Int64
			runClients(b, func() *http.Request {
				if n.Add(1)%5 == 0 {
					req, _ := http.NewRequest(http.MethodPost, base+"/v1/teams/acme/service_token", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					return req
				}
				req, _ := http.NewRequest(http.MethodGet, list, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				return req
			}, http.StatusOK, 0)
		})
	}
}

// BenchmarkBackendCreateGroup16Teams: concurrent writes that need not
// wait for each other, 16 clients each creating groups in a team of its
// own (16 teams, each with its own pam_admin service user).
func BenchmarkBackendCreateGroup16Teams(b *testing.B) {
	for _, backend := range backends {
		b.Run(string(backend), func(b *testing.B) {
			benchCreate16Teams(b, testdb.OpenOn(b, backend, pamtest.Migrations))
		})
	}
}

func benchCreate16Teams(b *testing.B, db *sql.DB) {
	srv, url := serveUnlimited(b, db)
	tokens := teamTokens(b, srv, url, 16)
	var n atomic.Int64
	runClients(b, func() *http.Request {
		return createGroupRequest(url, tokens, n.Add(1))
	}, http.StatusCreated, 0)
}

// createGroupRequest is the i-th create of a group, in team i mod
// len(tokens) (teamTokens).
func createGroupRequest(baseURL string, tokens []string, i int64) *http.Request {
	team := i % int64(len(tokens))
	body := fmt.Sprintf(`{"name":"new-%08d","roles":["end_user"]}`, i)
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/v1/teams/team-%02d/groups", baseURL, team), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tokens[team])
	req.Header.Set("Content-Type", "application/json")
	return req
}

// BenchmarkPoolSize measures a PAM replica on PostgreSQL with pools of
// several sizes (pgdb.Options.MaxConns, serve's --database-max-conns) and
// with pgx's two ways of running a statement (its per-connection statement
// cache, the default, or describe-and-execute every time): the list of 100
// groups and creates over 16 teams, 16 clients each.
func BenchmarkPoolSize(b *testing.B) {
	modes := []string{"cache_statement", "exec"}
	for _, mode := range modes {
		for _, conns := range []int{2, 4, 8, 16} {
			open := func(b *testing.B) *sql.DB {
				url, schema := testdb.OpenShared(b, pamtest.Migrations)
				sep := "?"
				if strings.Contains(url, "?") {
					sep = "&"
				}
				db, err := pgdb.OpenWith(context.Background(), url+sep+"default_query_exec_mode="+mode, schema, pam.API.Migrations().Postgres, pgdb.Options{MaxConns: conns})
				require.NoError(b, err)
				b.Cleanup(func() { _ = db.Close() })
				return db
			}
			b.Run(fmt.Sprintf("list/%s/conns=%d", mode, conns), func(b *testing.B) {
				base, tok := backendServerOn(b, open(b))
				benchListGroups(b, base, tok)
			})
			b.Run(fmt.Sprintf("create16teams/%s/conns=%d", mode, conns), func(b *testing.B) {
				benchCreate16Teams(b, open(b))
			})
		}
	}
}

// BenchmarkBackendCreateGroup: the concurrent write path, 16 clients
// creating groups (each a transaction: the name and quota checks, then the
// insert).
func BenchmarkBackendCreateGroup(b *testing.B) {
	for _, backend := range backends {
		b.Run(string(backend), func(b *testing.B) {
			base, tok := backendServer(b, backend)
			url := base + "/v1/teams/acme/groups"
			var n atomic.Int64
			runClients(b, func() *http.Request {
				body := fmt.Sprintf(`{"name":"new-%08d","roles":["end_user"]}`, n.Add(1))
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("Content-Type", "application/json")
				return req
			}, http.StatusCreated, 0)
		})
	}
}

// TestBenchProcessServer is the server of BenchmarkProcess, run in a child
// process of it (benchproc): PAM on the backend the benchmark asks for,
// with team acme's 150 groups (backendServer) and 16 teams of their own
// (teamTokens). Run alone, it skips.
func TestBenchProcessServer(t *testing.T) {
	benchproc.Child(t, func(t testing.TB, backend testdb.Backend) (string, map[string]string) {
		srv, url, token := startBackendServer(t, testdb.OpenOn(t, backend, pamtest.Migrations))
		key, err := srv.Operator().BootstrapServiceUser(context.Background(), "acme", "exchanger", "exchangers", []string{"end_user"}, 0)
		require.NoError(t, err)
		return url, map[string]string{"token": token, "teams": strings.Join(teamTokens(t, srv, url, 16), " "),
			"key_id": key.KeyID, "key_secret": key.KeySecret}
	})
}

// BenchmarkProcess compares one PAM server process on SQLite with one on
// PostgreSQL, each in a child process of its own (benchproc), so the CPU
// time and allocations per request are the server's alone; PostgreSQL's
// own CPU (its backends' processes) is reported apart, as
// postgres-db-cpu-us/req. Its loads: the list of 100 groups, token
// exchanges of one key, and group creates over 16 teams. Rounds of 16
// clients alternate between the two
// servers, and the ratios (PostgreSQL / SQLite) are the median of the
// rounds' ratios. Run with -benchtime 1x.
func BenchmarkProcess(b *testing.B) {
	procs := [2]*benchproc.Proc{
		benchproc.Start(b, "TestBenchProcessServer", testdb.SQLite),
		benchproc.Start(b, "TestBenchProcessServer", testdb.Postgres),
	}
	const rounds, perRound, clients = 5, 3000, 16
	b.Run("list100", func(b *testing.B) {
		benchproc.Interleave(b, rounds, procs, func(p *benchproc.Proc) benchproc.Result {
			url := p.URL + "/v1/teams/acme/groups?count=100"
			return p.Round(b, perRound, clients, func(p *benchproc.Proc, _ int64) *http.Request {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Authorization", "Bearer "+p.Info["token"])
				return req
			}, http.StatusOK, 5000)
		})
	})
	b.Run("exchange", func(b *testing.B) {
		benchproc.Interleave(b, rounds, procs, func(p *benchproc.Proc) benchproc.Result {
			body := fmt.Sprintf(`{"key_id":%q,"key_secret":%q}`, p.Info["key_id"], p.Info["key_secret"])
			return p.Round(b, perRound/3, clients, func(p *benchproc.Proc, _ int64) *http.Request {
				req, _ := http.NewRequest(http.MethodPost, p.URL+"/v1/teams/acme/service_token", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				return req
			}, http.StatusOK, 0)
		})
	})
	var n atomic.Int64
	b.Run("create16teams", func(b *testing.B) {
		benchproc.Interleave(b, rounds, procs, func(p *benchproc.Proc) benchproc.Result {
			tokens := strings.Fields(p.Info["teams"])
			return p.Round(b, perRound/3, clients, func(p *benchproc.Proc, _ int64) *http.Request {
				return createGroupRequest(p.URL, tokens, n.Add(1))
			}, http.StatusCreated, 0)
		})
	})
}

// BenchmarkBackendIssueToken: the token exchange, a write (each exchange
// stores its token before it answers), 16 clients exchanging one key. On
// SQLite the concurrent exchanges' inserts commit together (group commit);
// cpu-us/op is the whole process's CPU per exchange, clients included.
func BenchmarkBackendIssueToken(b *testing.B) {
	for _, backend := range backends {
		b.Run(string(backend), func(b *testing.B) {
			ctx := context.Background()
			srv, url := serveUnlimited(b, testdb.OpenOn(b, backend, pamtest.Migrations))
			_, err := srv.Operator().CreateTeam(ctx, "acme")
			require.NoError(b, err)
			key, err := srv.Operator().BootstrapServiceUser(ctx, "acme", "bot", "bot-group", []string{"end_user"}, 0)
			require.NoError(b, err)
			body := fmt.Sprintf(`{"key_id":%q,"key_secret":%q}`, key.KeyID, key.KeySecret)
			runClients(b, func() *http.Request {
				req, _ := http.NewRequest(http.MethodPost, url+"/v1/teams/acme/service_token", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				return req
			}, http.StatusOK, 0)
		})
	}
}
