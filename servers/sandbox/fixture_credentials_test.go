package sandbox_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// The credentials a fixture's fax and storage sections made are answered by
// GetSandbox as by the create, under the names the fixture gave them.
func TestFixtures_GetSandboxAnswersTheFixturesCredentials(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	for name, fixture := range map[string]string{"fax": faxFixture, "storage": storageFixture} {
		t.Run(name, func(t *testing.T) {
			b := e.createFixture(t, fixture)
			resp, err := b.api.GetSandboxWithResponse(ctx, b.Id)
			testkit.Answered(t, http.StatusOK, resp, err)
			got := resp.JSON200.FixtureCredentials
			require.NotNil(t, got, "%s", resp.Body)
			assert.Equal(t, b.FixtureCredentials, got, "the same as the create answered")
			switch name {
			case "fax":
				require.NotNil(t, got.Fax)
				assert.Contains(t, *got.Fax.ApiKeys, "ci")
				assert.Contains(t, *got.Fax.Applications, "billing")
				assert.Contains(t, *got.Fax.Numbers, "main")
			case "storage":
				require.NotNil(t, got.Storage)
				assert.Contains(t, *got.Storage.Keys, "ci")
				assert.Equal(t, b.Id+"-logs", (*got.Storage.Buckets)["logs"])
			}
		})
	}
}

// A snapshot request whose ttl is not a duration is 400, its pointer naming
// the field, and makes no snapshot.
func TestSnapshots_ATTLThatIsNotADurationIs400NamingIt(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, sandboxapi.CreateSandboxRequest{})
	resp, err := b.api.CreateSandboxSnapshotWithResponse(ctx, b.Id, sandboxapi.CreateSandboxSnapshotJSONRequestBody{Ttl: ptr("soon")})
	testkit.Answered(t, http.StatusBadRequest, resp, err)
	require.NotNil(t, resp.JSON400.Pointer, "%s", resp.Body)
	assert.Equal(t, "/ttl", *resp.JSON400.Pointer)
	list, err := b.api.ListSandboxSnapshotsWithResponse(ctx, b.Id)
	testkit.Answered(t, http.StatusOK, list, err)
	assert.Empty(t, list.JSON200.Data, "no snapshot made")
}
