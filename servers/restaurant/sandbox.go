package restaurant

import (
	"context"
	"fmt"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// resetTenants puts the set's restaurant back as seedTenants left it: its
// configuration (which its client can only read) stays, the client of creds
// stays, every token of the set's clients and every other client of the
// set, and the restaurant's rate-limit windows, are deleted.
func resetTenants(ctx context.Context, s *Server, set descriptor.TenantSet, creds *DemoCredentials) error {
	if err := s.deleteOfSet(ctx, set,
		apistore.Step{Query: `DELETE FROM tokens WHERE client_id IN (SELECT id FROM api_clients WHERE name = ?)`, Args: []any{set.Name}},
		apistore.Step{Query: `DELETE FROM client_grants WHERE client_id IN (SELECT id FROM api_clients WHERE name = ? AND id <> ?)`, Args: []any{set.Name, creds.ClientID}},
		apistore.Step{Query: `DELETE FROM api_clients WHERE name = ? AND id <> ?`, Args: []any{set.Name, creds.ClientID}},
	); err != nil {
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
	if err := s.deleteOfSet(ctx, set,
		apistore.Step{Query: `DELETE FROM tokens WHERE client_id IN (SELECT id FROM api_clients WHERE name = ?)`, Args: []any{set.Name}},
		apistore.Step{Query: `DELETE FROM client_grants WHERE restaurant_guid = ? OR client_id IN (SELECT id FROM api_clients WHERE name = ?)`, Args: []any{guid, set.Name}},
		apistore.Step{Query: `DELETE FROM api_clients WHERE name = ?`, Args: []any{set.Name}},
		apistore.Step{Query: `DELETE FROM entities WHERE restaurant_guid = ?`, Args: []any{guid}},
		apistore.Step{Query: `DELETE FROM restaurants WHERE guid = ?`, Args: []any{guid}},
	); err != nil {
		return fmt.Errorf("restaurant: delete %s: %w", set.Name, err)
	}
	return nil
}

// deleteOfSet runs steps, then deletes the set's restaurant's rate-limit
// windows (on a shared database: SQLite's live in the process), in one
// transaction that drops the cached tokens and grants.
func (s *Server) deleteOfSet(ctx context.Context, set descriptor.TenantSet, steps ...apistore.Step) error {
	guid, _ := setRestaurant(set.Name)
	if s.store.db.Shared() {
		steps = append(steps, apistore.Step{Query: `DELETE FROM rate_limits WHERE key IN (?, ?)`, Args: []any{"per_second:" + guid, "per_window:" + guid}})
	}
	return s.revokingTx(ctx, func(tx *sqldb.Tx) error { return apistore.Run(ctx, tx, steps...) })
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
