package pam_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/validation"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// BenchmarkListGroups lists a page of 100 groups through the whole stack
// (HTTP, rate limit, token lookup, validation, handler, SQLite, JSON) with
// the generated client, with request and response validation on and off.
//
//   - validation=on (strict, as in tests: each response checked before it is
//     sent), validation=background (as `apistack serve --validate-responses`
//     runs: sent first, checked on a bounded pool) and validation=off: each
//     server alone;
//   - interleaved (the run-time mode) and interleaved_strict: a server with
//     validation and one without, a batch of 16 requests to each per
//     iteration, so both see the same machine; it reports both rates and
//     on/off, the share of throughput validation keeps. The background checks
//     of a batch are waited for before the batch's time is taken, so their
//     cost is counted, never left to run into the other server's time.
func BenchmarkListGroups(b *testing.B) {
	for _, bc := range []struct {
		name string
		mode validationMode
	}{{"validation=on", strict}, {"validation=background", background}, {"validation=off", off}} {
		b.Run(bc.name, func(b *testing.B) {
			list, wait := listGroupsOn(b, bc.mode)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				list()
			}
			wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
	for _, bc := range []struct {
		name string
		mode validationMode
	}{{"interleaved", background}, {"interleaved_strict", strict}} {
		b.Run(bc.name, func(b *testing.B) {
			on, wait := listGroupsOn(b, bc.mode)
			off, _ := listGroupsOn(b, off)
			const batch = 16
			var onTime, offTime time.Duration
			for b.Loop() {
				start := time.Now()
				for range batch {
					on()
				}
				wait()
				mid := time.Now()
				for range batch {
					off()
				}
				onTime += mid.Sub(start)
				offTime += time.Since(mid)
			}
			b.ReportMetric(float64(b.N*batch)/onTime.Seconds(), "on-ops/s")
			b.ReportMetric(float64(b.N*batch)/offTime.Seconds(), "off-ops/s")
			b.ReportMetric(offTime.Seconds()/onTime.Seconds(), "on/off")
		})
	}
}

// validationMode is how a benchmarked server validates.
type validationMode int

const (
	strict validationMode = iota
	background
	off
)

// listGroupsOn starts a PAM server with 150 groups validating in the given
// mode, and returns a function that lists its first page of 100 groups and
// one that waits for the background checks started so far.
func listGroupsOn(b *testing.B, mode validationMode) (list func(), wait func()) {
	opts := pamtest.Options{NoValidation: mode == off, Settings: pam.Settings{RateLimit: 1 << 30}}
	wait = func() {}
	if mode == background {
		bg := validation.NewBackground(validation.BackgroundConfig{})
		opts.ResponseChecks, wait = bg, bg.Wait
	}
	env := pamtest.Start(b, opts)
	env.Team(b, "acme")
	key := env.ServiceUser(b, "acme", "bot", "pam_admin")
	env.Groups(b, "acme", "g", 150)
	api, err := pamapi.NewClientWithResponses(env.URL)
	require.NoError(b, err)
	ctx := context.Background()
	tok, err := api.IssueServiceTokenWithResponse(ctx, "acme", pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.KeyID, KeySecret: key.KeySecret})
	require.NoError(b, err)
	auth := bearer(tok.JSON200.BearerToken)
	count := 100
	params := &pamapi.ListGroupsParams{Count: &count}
	return func() {
		resp, err := api.ListGroupsWithResponse(ctx, "acme", params, auth)
		if err != nil || resp.StatusCode() != http.StatusOK || len(resp.JSON200.List) != 100 {
			b.Fatalf("list: %v %d", err, resp.StatusCode())
		}
	}, wait
}

// BenchmarkListGroupsServer measures the server alone under concurrent
// load: 16 goroutines list a page of 100 groups with raw HTTP requests whose
// bodies are read and discarded (no client-side decoding), with request
// validation on, as `apistack serve` runs by default.
func BenchmarkListGroupsServer(b *testing.B) {
	baseURL, token := backendServer(b, testdb.SQLite)
	url := baseURL + "/v1/teams/acme/groups?count=100"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(8) // 16 clients on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || n < 5000 {
				b.Errorf("list: status %d, %d bytes", resp.StatusCode, n)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
