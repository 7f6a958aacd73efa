package pam

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// Group creates on PostgreSQL are committed in batches (group commit).
// While one batch is on its way, the creates arriving queue; the next batch
// is one transaction sent in one round trip (sqldb.DB.Pipeline): for each
// team, in the order of the teams' ids, the team's row lock, then each of
// its creates' check-and-insert (createGroupSQL), each seeing the team's
// creates committed before the lock and those before it in the batch. So
// names and quotas stay exact, batches of every replica lock teams in one
// order (no deadlock between them), and a batch of n creates costs one
// round trip, one commit and one commit notification instead of n of each.
// A batch PostgreSQL refuses (an error, not a verdict) is not the members'
// fault: each member then runs alone. (sqldb.GroupCommit queues them.)

// pendingCreate is one create waiting in a batch, and, once committed, the
// verdict createGroupSQL returned.
type pendingCreate struct {
	g      group
	teamID string
	now    time.Time
	taken  bool
	limit  sql.NullInt64
	n      int
}

// batcher is a group commit made at first use, committing with commit on
// the database of its first use (creates and tokens on PostgreSQL).
type batcher[T any] struct {
	once sync.Once
	gc   *sqldb.GroupCommit[T]
}

// of returns the group commit on db.
func (b *batcher[T]) of(db *sqldb.DB, commit func(context.Context, *sqldb.DB, []T) []error) *sqldb.GroupCommit[T] {
	b.once.Do(func() {
		b.gc = &sqldb.GroupCommit[T]{Commit: func(ctx context.Context, batch []T) []error {
			return commit(ctx, db, batch)
		}}
	})
	return b.gc
}

// commitCreates commits batch in one transaction and returns each member's
// outcome; when PostgreSQL refuses the batch, each member runs alone.
func commitCreates(ctx context.Context, db *sqldb.DB, batch []*pendingCreate) []error {
	errs := make([]error, len(batch))
	err := db.Pipeline(ctx, createStatements(batch)...)
	if err == nil || len(batch) == 1 {
		for i, p := range batch {
			errs[i] = p.outcome(err)
		}
		return errs
	}
	for i, p := range batch {
		errs[i] = p.outcome(db.Pipeline(ctx, createStatements([]*pendingCreate{p})...))
	}
	return errs
}

// createStatements are the statements of a batch: each team's row lock,
// in the order of the teams' ids, followed by its creates in the order
// they came.
func createStatements(batch []*pendingCreate) []sqldb.Statement {
	byTeam := slices.Clone(batch)
	slices.SortStableFunc(byTeam, func(a, b *pendingCreate) int { return cmp.Compare(a.teamID, b.teamID) })
	stmts := make([]sqldb.Statement, 0, 2*len(byTeam))
	for i, p := range byTeam {
		if i == 0 || byTeam[i-1].teamID != p.teamID {
			stmts = append(stmts, sqldb.Statement{SQL: `SELECT id FROM teams WHERE id = ? FOR NO KEY UPDATE`, Args: []any{p.teamID}})
		}
		stmts = append(stmts, sqldb.Statement{SQL: createGroupSQL,
			Args: []any{p.teamID, p.g.Name, p.teamID, p.teamID, quotaGroups, p.g.ID, p.teamID, p.g.Name, joinRoles(p.g.Roles), sqldb.Micros(p.now)},
			Scan: []any{&p.taken, &p.limit, &p.n}})
	}
	return stmts
}

// outcome is the create's result once its batch's transaction ended with
// err.
func (p *pendingCreate) outcome(err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("create group: %w", err)
	case p.taken:
		return storeerr.ErrAlreadyExists
	case p.limit.Valid && int64(p.n) >= p.limit.Int64:
		return &quotaError{Resource: quotaGroups, Limit: int(p.limit.Int64)}
	}
	return nil
}

// createGroupSQL inserts a group when its name is free among the team's
// live groups and the team's group quota, if any, has room, and returns the
// verdict it decided by: whether the name is taken, the quota (NULL for
// none) and, under a quota, the team's live groups. Parameters: the team
// and name, the team (count), the team and quota resource, then the row.
const createGroupSQL = `WITH v AS (
	SELECT EXISTS (SELECT 1 FROM team_groups WHERE team_id = ? AND name = ? AND deleted_at IS NULL) AS taken,
		q.max_count AS lim,
		CASE WHEN q.max_count IS NULL THEN 0
			ELSE (SELECT COUNT(*) FROM team_groups WHERE team_id = ? AND deleted_at IS NULL) END AS n
	FROM (SELECT 1) AS one LEFT JOIN team_quotas q ON q.team_id = ? AND q.resource = ?
), ins AS (
	INSERT INTO team_groups (id, team_id, name, roles, created_at)
	SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT)
	FROM v WHERE NOT v.taken AND (v.lim IS NULL OR v.n < v.lim)
	RETURNING 1
)
SELECT v.taken, v.lim, v.n FROM v`
