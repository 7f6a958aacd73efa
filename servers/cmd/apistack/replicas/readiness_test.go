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

// TestReplicas_NotReadyUntilMigrated: a replica's ports accept no
// connection while its migrations wait (here for the migration lock, held by
// the test as another replica migrating would), so a load balancer's check
// and a client alike see it down rather than half started; once they are
// applied every port answers /readyz 200; on SIGTERM they answer 503 for the
// drain.
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
	var holder int
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&holder))

	r := c.launch(t, "--shutdown-drain", "3s")
	// The replica tries for the lock (goose polls with pg_try_advisory_lock):
	// PostgreSQL shows another session that asked for it.
	require.Eventually(t, func() bool {
		var trying int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE query LIKE '%advisory_lock%' AND pid <> $1 AND pid <> pg_backend_pid()`, holder).Scan(&trying)
		return err == nil && trying > 0
	}, 30*time.Second, 20*time.Millisecond, "the replica waits for the migration lock")
	for _, api := range apis {
		assert.Zero(t, readyz(r, api), "%s accepts a connection while the migrations wait", api)
	}

	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, lock.DefaultLockID)
	require.NoError(t, err)
	r.waitReady(t, false)

	require.NoError(t, r.proc.Cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool { return readyz(r, "pam") == http.StatusServiceUnavailable }, 3*time.Second, 10*time.Millisecond,
		"503 from the start of the shutdown")
	<-r.proc.Exited()
	assert.Zero(t, readyz(r, "pam"), "the port is closed after the drain")
}
