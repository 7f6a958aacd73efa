package replicas

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver, to count what was stored
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplicas_ConcurrentWrites: 32 clients creating PAM groups and sending
// faxes for 10 s against three replicas: no 5xx, and the database holds
// exactly what was answered 2xx.
func TestReplicas_ConcurrentWrites(t *testing.T) {
	c, rs := faxCluster(t, "--fax-step-interval", "20ms") // the simulator steps fast
	recv := newReceiver(t)
	f := newFaxTenant(t, client("admin", rs...), c.adminToken, recv)
	team := newPAMTeam(t, client("admin", rs...), c.adminToken, "busy")
	pamClient, faxClient := client("pam", rs...), client("fax", rs...)
	token := pamToken(t, pamClient, team)

	// No request starts after 10 s; the ones in flight finish, so every
	// request has its answer.
	ctx := context.Background()
	end := time.Now().Add(10 * time.Second)
	var groups2xx, faxes2xx atomic.Int64
	var mu sync.Mutex
	var failures []string
	fail := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, s)
		}
	}
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				if w%2 == 0 {
					resp, body, err := call(ctx, pamClient, http.MethodPost, "http://pam/v1/teams/busy/groups", token,
						map[string]any{"name": fmt.Sprintf("w%02d-%05d", w, i), "roles": []string{"end_user"}})
					switch {
					case err != nil:
						fail(err.Error())
					case resp.StatusCode/100 == 2:
						groups2xx.Add(1)
					default:
						fail(fmt.Sprintf("create group: %d %s", resp.StatusCode, body))
					}
					continue
				}
				if _, _, err := f.send(ctx, faxClient); err != nil {
					fail(err.Error())
				} else {
					faxes2xx.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Empty(t, failures, "no 5xx, no other failure")

	db, err := sql.Open("pgx", c.url)
	require.NoError(t, err)
	defer db.Close()
	var groups, faxes int64
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM pam.team_groups g JOIN pam.teams t ON t.id = g.team_id WHERE t.name = 'busy'`).Scan(&groups))
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM fax.faxes`).Scan(&faxes))
	assert.Equal(t, groups2xx.Load(), groups-1, "groups stored (beside the bot's own) = 201 answers")
	assert.Equal(t, faxes2xx.Load(), faxes, "faxes stored = 202 answers")
	t.Logf("10 s, 32 clients on 3 replicas: %d groups and %d faxes created", groups2xx.Load(), faxes2xx.Load())
	assert.Positive(t, groups2xx.Load())
	assert.Positive(t, faxes2xx.Load())
}
