package restaurant

import (
	"context"
	"fmt"

	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// resetTenants puts the set's restaurant back as seedTenants left it: its
// configuration (which its client can only read) stays, the client of creds
// stays, every token of the set's clients and every other client of the
// set, and the restaurant's rate-limit windows, are deleted.
func resetTenants(ctx context.Context, s *Server, set descriptor.TenantSet, creds *DemoCredentials) error {
	guid, _ := setRestaurant(set.Name)
	err := s.revokingTx(ctx, func(tx *sqldb.Tx) error {
		steps := []struct {
			q    string
			args []any
		}{
			{`DELETE FROM tokens WHERE client_id IN (SELECT id FROM api_clients WHERE name = ?)`, []any{set.Name}},
			{`DELETE FROM client_grants WHERE client_id IN (SELECT id FROM api_clients WHERE name = ? AND id <> ?)`, []any{set.Name, creds.ClientID}},
			{`DELETE FROM api_clients WHERE name = ? AND id <> ?`, []any{set.Name, creds.ClientID}},
		}
		if s.store.db.Shared() { // SQLite's windows live in the process
			steps = append(steps, struct {
				q    string
				args []any
			}{`DELETE FROM rate_limits WHERE key IN (?, ?)`, []any{"per_second:" + guid, "per_window:" + guid}})
		}
		for _, st := range steps {
			if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("restaurant: reset %s: %w", set.Name, err)
	}
	return nil
}

// deleteTenants deletes the set's restaurant with its configuration, grants
// and rate-limit windows, and the set's clients with their tokens.
func deleteTenants(ctx context.Context, s *Server, set descriptor.TenantSet) error {
	if set.Name == descriptor.DemoSet {
		return fmt.Errorf("restaurant: the demo set is never deleted")
	}
	guid, _ := setRestaurant(set.Name)
	err := s.revokingTx(ctx, func(tx *sqldb.Tx) error {
		steps := []struct {
			q    string
			args []any
		}{
			{`DELETE FROM tokens WHERE client_id IN (SELECT id FROM api_clients WHERE name = ?)`, []any{set.Name}},
			{`DELETE FROM client_grants WHERE restaurant_guid = ? OR client_id IN (SELECT id FROM api_clients WHERE name = ?)`, []any{guid, set.Name}},
			{`DELETE FROM api_clients WHERE name = ?`, []any{set.Name}},
			{`DELETE FROM entities WHERE restaurant_guid = ?`, []any{guid}},
			{`DELETE FROM restaurants WHERE guid = ?`, []any{guid}},
		}
		if s.store.db.Shared() { // SQLite's windows live in the process
			steps = append(steps, struct {
				q    string
				args []any
			}{`DELETE FROM rate_limits WHERE key IN (?, ?)`, []any{"per_second:" + guid, "per_window:" + guid}})
		}
		for _, st := range steps {
			if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("restaurant: delete %s: %w", set.Name, err)
	}
	return nil
}

// revokingTx runs f in a transaction, commits it, then drops the cached
// tokens and grants.
func (s *Server) revokingTx(ctx context.Context, f func(*sqldb.Tx) error) error {
	if err := s.store.db.InTxOnce(ctx, f); err != nil {
		return err
	}
	s.tokens.Invalidate()
	s.grants.Invalidate()
	return nil
}
