package contract_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/protocol/contract"
)

// envCoverageCall makes this test binary, run again as a child, make one
// call per transport (see TestTransport_WithoutCoverageRecordsNothing).
const envCoverageCall = "APISTACK_TEST_CONTRACT_COVERAGE_CALL"

// TestTransport_WithoutCoverageRecordsNothing runs this test binary again
// with a coverage directory of its own (the recorder reads it once, at
// start): the child lists the groups through a transport that records
// (answered 200) and through one made WithoutCoverage (answered 403). The
// record holds the first pair and not the second.
func TestTransport_WithoutCoverageRecordsNothing(t *testing.T) {
	if os.Getenv(envCoverageCall) != "" {
		coverageCalls(t)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestTransport_WithoutCoverageRecordsNothing$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCoverageCall+"=1", contractcoverage.EnvDir+"="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	pairs, err := contractcoverage.ReadDir(dir)
	require.NoError(t, err)
	assert.Equal(t, map[contractcoverage.Pair]bool{{API: "pam", OperationID: "ListGroups", Status: 200}: true}, pairs,
		"the recording transport's pair, and not the one WithoutCoverage saw")
	fields, err := contractcoverage.ReadFieldsDir(dir)
	require.NoError(t, err)
	for f := range fields {
		assert.Equal(t, 200, f.Status, "no field of the 403 is recorded: %s", f)
	}
	assert.NotEmpty(t, fields)
}

func coverageCalls(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		opts   []contract.Option
	}{
		{200, `{"list":[]}`, nil},
		{403, `{"code":403,"error":"forbidden_error","message":"m","error_cause":[{"error":"e","location_type":"header","location":"Authorization"}]}`,
			[]contract.Option{contract.WithoutCoverage()}},
	} {
		srv := fakePAM(c.status, rateHeaders, c.body)
		rt, err := contract.ForAPI(contract.PAM, nil, c.opts...)
		require.NoError(t, err)
		client, err := pamapi.NewClientWithResponses(srv.URL, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
		require.NoError(t, err)
		resp, err := client.ListGroupsWithResponse(context.Background(), "acme", nil,
			func(_ context.Context, r *http.Request) error { r.Header.Set("Authorization", "Bearer t"); return nil })
		require.NoError(t, err)
		require.Equal(t, c.status, resp.StatusCode())
		srv.Close()
	}
}
