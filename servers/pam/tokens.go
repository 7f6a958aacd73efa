package pam

import (
	"context"
	"fmt"
	"time"

	"github.com/apistack/apistack/servers/internal/sqldb"
)

// Token inserts on PostgreSQL are committed in batches (group commit), as
// group creates are (creates.go): while one batch is on its way, the tokens
// of the exchanges arriving queue, and the next batch inserts them all in
// one statement, so a batch of n exchanges costs one round trip and one
// commit instead of n of each. Each exchange still answers only once its
// token is committed. A batch PostgreSQL refuses (an error, not anyone's
// doing: a token's hash is random) is not its members' fault: each then
// runs alone. On SQLite the database's own group commit batches every
// write (sqldb).

// pendingToken is one token waiting in a batch.
type pendingToken struct {
	hash         []byte
	key          keyRecord
	now, expires time.Time
}

// commitTokens inserts batch in one statement and returns each member's
// outcome; when PostgreSQL refuses the batch, each member runs alone.
func commitTokens(ctx context.Context, db *sqldb.DB, batch []*pendingToken) []error {
	errs := make([]error, len(batch))
	err := insertTokens(ctx, db, batch)
	if err == nil || len(batch) == 1 {
		for i := range batch {
			errs[i] = err
		}
		return errs
	}
	for i := range batch {
		errs[i] = insertTokens(ctx, db, batch[i:i+1])
	}
	return errs
}

// insertTokensSQL inserts the tokens given as one array a column
// (PostgreSQL), so that a batch of any size is one prepared statement.
const insertTokensSQL = `INSERT INTO tokens (hash, key_id, user_id, team_id, created_at, expires_at)
SELECT * FROM unnest(CAST(? AS BYTEA[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]))`

func insertTokens(ctx context.Context, db *sqldb.DB, batch []*pendingToken) error {
	n := len(batch)
	hashes, keys, users, teams := make([][]byte, n), make([]string, n), make([]string, n), make([]string, n)
	created, expires := make([]int64, n), make([]int64, n)
	for i, p := range batch {
		hashes[i], keys[i], users[i], teams[i] = p.hash, p.key.ID, p.key.UserID, p.key.TeamID
		created[i], expires[i] = sqldb.Micros(p.now), sqldb.Micros(p.expires)
	}
	if _, err := db.QuietExecContext(ctx, insertTokensSQL, hashes, keys, users, teams, created, expires); err != nil {
		return fmt.Errorf("store token: %w", err)
	}
	return nil
}
