package storage

import (
	"context"
	"fmt"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// resetTenants puts the set's account back as seedTenants left it: its two
// buckets with their versioning and no lifecycle configuration, and the key
// of creds; every other bucket and key of the account is deleted.
func resetTenants(ctx context.Context, s *Server, set descriptor.TenantSet, creds *DemoCredentials) error {
	account := setAccount(set.Name)
	err := s.store.inTx(ctx, func(tx *sqldb.Tx) error {
		return apistore.Run(ctx, tx,
			apistore.Step{Query: `DELETE FROM lifecycle_configurations WHERE bucket IN (SELECT name FROM buckets WHERE account = ?)`, Args: []any{account}},
			apistore.Step{Query: `DELETE FROM buckets WHERE account = ? AND name NOT IN (?, ?)`, Args: []any{account, creds.Bucket, creds.VersionedBucket}},
			apistore.Step{Query: `UPDATE buckets SET versioning = ? WHERE account = ? AND name = ?`, Args: []any{string(Unversioned), account, creds.Bucket}},
			apistore.Step{Query: `UPDATE buckets SET versioning = ? WHERE account = ? AND name = ?`, Args: []any{string(Enabled), account, creds.VersionedBucket}},
			apistore.Step{Query: `DELETE FROM access_keys WHERE account = ? AND key_id <> ?`, Args: []any{account, creds.KeyID}})
	})
	if err != nil {
		return fmt.Errorf("storage: reset %s: %w", set.Name, err)
	}
	return nil
}

// deleteTenants deletes the set's account: its buckets with their lifecycle
// configurations, and its keys.
func deleteTenants(ctx context.Context, s *Server, set descriptor.TenantSet) error {
	account := setAccount(set.Name)
	if account == DefaultAccount {
		return fmt.Errorf("storage: the set %q owns the default account, which is never deleted", set.Name)
	}
	err := s.store.inTx(ctx, func(tx *sqldb.Tx) error {
		of := []any{account}
		return apistore.Run(ctx, tx,
			apistore.Step{Query: `DELETE FROM lifecycle_configurations WHERE bucket IN (SELECT name FROM buckets WHERE account = ?)`, Args: of},
			apistore.Step{Query: `DELETE FROM buckets WHERE account = ?`, Args: of},
			apistore.Step{Query: `DELETE FROM access_keys WHERE account = ?`, Args: of})
	})
	if err != nil {
		return fmt.Errorf("storage: delete %s: %w", set.Name, err)
	}
	return nil
}

// inTx runs f in a transaction, commits it, then drops what the server
// cached about keys.
func (s *store) inTx(ctx context.Context, f func(*sqldb.Tx) error) error {
	if err := s.db.InTxOnce(ctx, f); err != nil {
		return err
	}
	if s.revoked != nil {
		s.revoked()
	}
	return nil
}
