package pam_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// BenchmarkListGroups lists a page of 100 groups through the whole stack
// (HTTP, rate limit, token lookup, validation, handler, SQLite, JSON) with
// the generated client, with request and response validation on and off.
func BenchmarkListGroups(b *testing.B) {
	for _, bc := range []struct {
		name string
		off  bool
	}{{"validation=on", false}, {"validation=off", true}} {
		b.Run(bc.name, func(b *testing.B) {
			env := pamtest.Start(b, pamtest.Options{NoValidation: bc.off, RateLimit: 1 << 30})
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

			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				resp, err := api.ListGroupsWithResponse(ctx, "acme", params, auth)
				if err != nil || resp.StatusCode() != http.StatusOK || len(resp.JSON200.List) != 100 {
					b.Fatalf("list: %v %d", err, resp.StatusCode())
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
