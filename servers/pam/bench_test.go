package pam_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// BenchmarkListGroups lists a page of 100 groups through the whole stack
// (HTTP, rate limit, token lookup, validation, handler, SQLite, JSON) with
// the generated client, with request and response validation on and off.
//
//   - validation=on and validation=off: each server alone;
//   - interleaved: both servers, a batch of 16 requests to each per
//     iteration, so both see the same machine; it reports both rates and
//     on/off, the share of throughput validation keeps. Batches, not single
//     requests: the validating server checks each answer after sending it, and
//     that check must not run into the other server's time (only the last
//     check of a batch can).
func BenchmarkListGroups(b *testing.B) {
	for _, bc := range []struct {
		name string
		off  bool
	}{{"validation=on", false}, {"validation=off", true}} {
		b.Run(bc.name, func(b *testing.B) {
			list := listGroupsOn(b, bc.off)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				list()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		on, off := listGroupsOn(b, false), listGroupsOn(b, true)
		const batch = 16
		var onTime, offTime time.Duration
		for b.Loop() {
			start := time.Now()
			for range batch {
				on()
			}
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

// listGroupsOn starts a PAM server with 150 groups, validation on or off,
// and returns a function that lists its first page of 100 groups.
func listGroupsOn(b *testing.B, validationOff bool) func() {
	env := pamtest.Start(b, pamtest.Options{NoValidation: validationOff, RateLimit: 1 << 30})
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
	}
}
