package pam

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// resetTenants puts the set's team back as seedTenants left it: the team
// enabled, the service user <set>-bot active in the group <set>-admins
// holding pam_admin, and the key of creds; every other group, user, key,
// membership, quota and every token of the team is deleted.
func resetTenants(ctx context.Context, s *Server, set descriptor.TenantSet, creds *DemoCredentials) error {
	err := s.store.resetTeam(ctx, set.Name, set.Name+"-bot", set.Name+"-admins", creds.KeyID, joinRoles([]string{"pam_admin"}))
	if err != nil {
		return fmt.Errorf("pam: reset %s: %w", set.Name, err)
	}
	return nil
}

// deleteTenants deletes the set's team and everything of it.
func deleteTenants(ctx context.Context, s *Server, set descriptor.TenantSet) error {
	if err := s.store.deleteTeam(ctx, set.Name); err != nil {
		return fmt.Errorf("pam: delete %s: %w", set.Name, err)
	}
	return nil
}

// deleteTeam deletes the named team with its users, groups, members, keys,
// tokens, quotas and rate-limit buckets, in one transaction; a missing team
// is not an error.
func (s *store) deleteTeam(ctx context.Context, name string) error {
	return s.revokingTx(ctx, func(tx *sqldb.Tx) error {
		var teamID string
		err := tx.QueryRowContext(ctx, `SELECT id FROM teams WHERE name = ?`, name).Scan(&teamID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read team: %w", err)
		}
		if err := s.deleteRateLimits(ctx, tx, teamID, ""); err != nil {
			return err
		}
		team := []any{teamID}
		if err := apistore.Run(ctx, tx,
			apistore.Step{Query: `DELETE FROM tokens WHERE team_id = ?`, Args: team},
			apistore.Step{Query: `DELETE FROM service_keys WHERE user_id IN (SELECT id FROM users WHERE team_id = ?)`, Args: team},
			apistore.Step{Query: `DELETE FROM group_members WHERE group_id IN (SELECT id FROM team_groups WHERE team_id = ?)`, Args: team},
			apistore.Step{Query: `DELETE FROM team_quotas WHERE team_id = ?`, Args: team},
			apistore.Step{Query: `DELETE FROM team_groups WHERE team_id = ?`, Args: team},
			apistore.Step{Query: `DELETE FROM users WHERE team_id = ?`, Args: team},
			apistore.Step{Query: `DELETE FROM teams WHERE id = ?`, Args: team}); err != nil {
			return fmt.Errorf("delete team: %w", err)
		}
		return nil
	})
}

// resetTeam deletes everything of the named team but its seeded user, group,
// membership and key, and restores those as seeded.
func (s *store) resetTeam(ctx context.Context, name, user, group, keyID, roles string) error {
	return s.revokingTx(ctx, func(tx *sqldb.Tx) error {
		var teamID, userID string
		err := tx.QueryRowContext(ctx, `SELECT t.id, u.id FROM teams t JOIN users u ON u.team_id = t.id AND u.name = ? WHERE t.name = ?`,
			user, name).Scan(&teamID, &userID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("team %q with its user %q: %w", name, user, storeerr.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read team: %w", err)
		}
		var groupID string
		err = tx.QueryRowContext(ctx, `SELECT id FROM team_groups WHERE team_id = ? AND name = ? ORDER BY deleted_at IS NULL DESC, created_at LIMIT 1`,
			teamID, group).Scan(&groupID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("group %q: %w", group, storeerr.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read group: %w", err)
		}
		if err := s.deleteRateLimits(ctx, tx, teamID, keyID); err != nil {
			return err
		}
		if err := apistore.Run(ctx, tx,
			apistore.Step{Query: `DELETE FROM tokens WHERE team_id = ?`, Args: []any{teamID}},
			apistore.Step{Query: `DELETE FROM service_keys WHERE user_id IN (SELECT id FROM users WHERE team_id = ?) AND id <> ?`, Args: []any{teamID, keyID}},
			apistore.Step{Query: `UPDATE service_keys SET deleted_at = NULL WHERE id = ?`, Args: []any{keyID}},
			apistore.Step{Query: `DELETE FROM group_members WHERE group_id IN (SELECT id FROM team_groups WHERE team_id = ?) AND NOT (group_id = ? AND user_id = ?)`, Args: []any{teamID, groupID, userID}},
			apistore.Step{Query: `DELETE FROM team_quotas WHERE team_id = ?`, Args: []any{teamID}},
			apistore.Step{Query: `DELETE FROM team_groups WHERE team_id = ? AND id <> ?`, Args: []any{teamID, groupID}},
			apistore.Step{Query: `UPDATE team_groups SET roles = ?, deleted_at = NULL WHERE id = ?`, Args: []any{roles, groupID}},
			apistore.Step{Query: `DELETE FROM users WHERE team_id = ? AND id <> ?`, Args: []any{teamID, userID}},
			apistore.Step{Query: `UPDATE users SET status = 'active' WHERE id = ?`, Args: []any{userID}},
			apistore.Step{Query: `UPDATE teams SET disabled = ? WHERE id = ?`, Args: []any{false, teamID}}); err != nil {
			return fmt.Errorf("reset team: %w", err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM group_members WHERE group_id = ? AND user_id = ?`, groupID, userID).Scan(&n); err != nil {
			return fmt.Errorf("read membership: %w", err)
		}
		if n == 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO group_members (group_id, user_id) VALUES (?, ?)`, groupID, userID); err != nil {
				return fmt.Errorf("restore membership: %w", err)
			}
		}
		return nil
	})
}

// deleteRateLimits deletes the rate-limit buckets of the team's users and
// the failed-exchange counts of its keys but keep ("" keeps none). Only a
// shared database holds them (SQLite's live in the process, keyed by ids
// that are never reused).
func (s *store) deleteRateLimits(ctx context.Context, tx *sqldb.Tx, teamID, keep string) error {
	if !s.db.Shared() {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM rate_limits WHERE key IN (SELECT 'requests:user:' || id FROM users WHERE team_id = ?)`, teamID); err != nil {
		return fmt.Errorf("delete rate limits: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM rate_limits WHERE key IN (SELECT 'exchange_failures:key:' || k.id
		FROM service_keys k JOIN users u ON u.id = k.user_id WHERE u.team_id = ? AND k.id <> ?)`, teamID, keep); err != nil {
		return fmt.Errorf("delete rate limits: %w", err)
	}
	return nil
}

// revokingTx runs f in a write transaction, then drops what the server
// cached about credentials.
func (s *store) revokingTx(ctx context.Context, f func(*sqldb.Tx) error) error {
	if err := s.inTx(ctx, f); err != nil {
		return err
	}
	s.changed()
	return nil
}
