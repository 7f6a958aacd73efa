package pam_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/storeerr"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// Concurrent creates on one server, several racing for each name in three
// teams, one of them under a group quota: each name is created once, the
// quota is met exactly, and the other teams are not held to it (on
// PostgreSQL the creates are committed in batches holding several teams).
func TestCreateTeamGroup_ConcurrentCreatesKeepNamesAndQuotasExact(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	ctx := context.Background()
	teams := []string{"t0", "t1", "t2"}
	for _, team := range teams {
		env.Team(t, team)
	}
	quota := 5
	require.NoError(t, env.Operator.SetQuotas(ctx, "t0", pam.Quotas{Groups: &quota}))
	const creators, rounds = 48, 4
	var mu sync.Mutex
	created := map[string]int{}
	var others []error
	var wg sync.WaitGroup
	for c := range creators {
		wg.Go(func() {
			team := teams[c%len(teams)]
			for r := range rounds {
				// Two creators of each team race for each name.
				name := fmt.Sprintf("r%d-g%02d", r, c/len(teams)/2)
				err := env.Operator.CreateTeamGroup(ctx, team, name, nil)
				mu.Lock()
				switch {
				case err == nil:
					created[team+"/"+name]++
				case !errors.Is(err, storeerr.ErrAlreadyExists) && !strings.Contains(err.Error(), "quota of 5 groups exceeded"):
					others = append(others, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Empty(t, others, "every refusal is a taken name or the quota")
	perTeam := map[string]int{}
	for key, n := range created {
		assert.Equal(t, 1, n, "%s created once", key)
		perTeam[strings.SplitN(key, "/", 2)[0]]++
	}
	assert.Equal(t, map[string]int{"t0": quota, "t1": rounds * creators / len(teams) / 2, "t2": rounds * creators / len(teams) / 2}, perTeam)
}
