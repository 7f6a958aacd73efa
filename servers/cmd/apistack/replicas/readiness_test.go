package replicas

import (
	"context"
	"database/sql"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/pressly/goose/v3/lock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readyz returns the status of r's /readyz on the port of api (0 when the
// port does not answer).
func readyz(r *replica, api string) int {
	resp, err := http.Get("http://" + r.addr[api] + "/readyz")
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestReplicas_NotReadyUntilMigrated: a replica's ports answer /readyz 503
// while its migrations wait (here for the migration lock, held by the test
// as another replica migrating would), and 200 once they are applied; on
// SIGTERM they answer 503 for the drain.
func TestReplicas_NotReadyUntilMigrated(t *testing.T) {
	c := newCluster(t)
	db, err := sql.Open("pgx", c.url)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lock.DefaultLockID)
	require.NoError(t, err)

	r := c.launch(t, "--shutdown-drain", "3s")
	require.Eventually(t, func() bool { return readyz(r, "pam") == http.StatusServiceUnavailable }, 30*time.Second, 20*time.Millisecond,
		"the port listens and is not ready while the migrations wait")
	for _, api := range apis {
		assert.Equal(t, http.StatusServiceUnavailable, readyz(r, api), api)
	}
	resp, body, err := call(ctx, direct(r, "pam"), http.MethodGet, "http://pam/v1/teams/x/groups", "", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)

	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, lock.DefaultLockID)
	require.NoError(t, err)
	r.waitReady(t, false)

	require.NoError(t, r.proc.Cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool { return readyz(r, "pam") == http.StatusServiceUnavailable }, 3*time.Second, 10*time.Millisecond,
		"503 from the start of the shutdown")
	<-r.proc.Exited()
	assert.Zero(t, readyz(r, "pam"), "the port is closed after the drain")
}
