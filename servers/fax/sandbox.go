package fax

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// resetTenants puts the set's account back as seedTenants left it: its API
// key of creds, its application creds.ConnectionID (with the set's webhook
// URL and no failover) and that application's profile, and its number
// creds.From enabled on it; every other key, application, profile and
// number, and every fax, stored document, event and delivery attempt, is
// deleted.
func resetTenants(ctx context.Context, s *Server, set descriptor.TenantSet, creds *DemoCredentials) error {
	inboxURL := set.WebhookURL
	if inboxURL == "" {
		inboxURL = set.URLs["admin"] + InboxPath
	}
	if err := s.store.resetAccount(ctx, set.Name, hashKey(creds.APIKey), creds.ConnectionID, creds.From, inboxURL, sqldb.Micros(s.clock.Now())); err != nil {
		return fmt.Errorf("fax: reset %s: %w", set.Name, err)
	}
	return nil
}

// deleteTenants deletes the set's account and everything of it, faxes in
// flight included.
func deleteTenants(ctx context.Context, s *Server, set descriptor.TenantSet) error {
	if err := s.store.deleteAccount(ctx, set.Name); err != nil {
		return fmt.Errorf("fax: delete %s: %w", set.Name, err)
	}
	return nil
}

// lockFaxes locks the account's faxes (PostgreSQL) before their data is
// deleted, so a delivery attempt recorded meanwhile (insertAttempt) is
// either refused or seen.
func (s *store) lockFaxes(ctx context.Context, tx *sqldb.Tx, accountID string) error {
	if s.lockClause("x") == "" {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM faxes WHERE account_id = ? FOR UPDATE`, accountID)
	if err != nil {
		return fmt.Errorf("lock faxes: %w", err)
	}
	return rows.Close()
}

// faxDataOf deletes the account's faxes with their events, delivery
// attempts and stored documents.
var faxDataOf = []string{
	`DELETE FROM delivery_attempts WHERE fax_id IN (SELECT id FROM faxes WHERE account_id = ?)`,
	`DELETE FROM outbox WHERE fax_id IN (SELECT id FROM faxes WHERE account_id = ?)`,
	`DELETE FROM faxes WHERE account_id = ?`,
	`DELETE FROM media WHERE account_id = ?`,
}

// deleteAccount deletes the named account and all of its data in one
// transaction; a missing account is not an error.
func (s *store) deleteAccount(ctx context.Context, name string) error {
	return s.revokingTx(ctx, func(tx *sqldb.Tx) error {
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name = ?`, name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read account: %w", err)
		}
		if err := s.lockFaxes(ctx, tx, id); err != nil {
			return err
		}
		for _, q := range append(faxDataOf,
			`DELETE FROM numbers WHERE account_id = ?`,
			`DELETE FROM fax_applications WHERE account_id = ?`,
			`DELETE FROM outbound_voice_profiles WHERE account_id = ?`,
			`DELETE FROM api_keys WHERE account_id = ?`,
			`DELETE FROM accounts WHERE id = ?`,
		) {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return fmt.Errorf("delete account: %w", err)
			}
		}
		return s.forgetRate(ctx, tx, id)
	})
}

// resetAccount deletes everything of the named account but the key whose
// hash is keyHash, the application appID with its profile, and the number
// from, and restores those as seeded.
func (s *store) resetAccount(ctx context.Context, name string, keyHash []byte, appID, from, webhookURL string, now int64) error {
	return s.revokingTx(ctx, func(tx *sqldb.Tx) error {
		var id string
		var profile sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT a.id, f.outbound_voice_profile_id FROM accounts a
			JOIN fax_applications f ON f.account_id = a.id AND f.id = ? WHERE a.name = ?`, appID, name).Scan(&id, &profile)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("account %q with its application %s: %w", name, appID, storeerr.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read account: %w", err)
		}
		steps := []struct {
			q    string
			args []any
		}{
			{`DELETE FROM numbers WHERE account_id = ? AND phone_number <> ?`, []any{id, from}},
			{`UPDATE numbers SET application_id = ? WHERE account_id = ? AND phone_number = ?`, []any{appID, id, from}},
			{`DELETE FROM fax_applications WHERE account_id = ? AND id <> ?`, []any{id, appID}},
			{`UPDATE fax_applications SET application_name = ?, webhook_url = ?, webhook_failover_url = '', updated_at = ? WHERE id = ?`,
				[]any{name, webhookURL, now, appID}},
			{`DELETE FROM outbound_voice_profiles WHERE account_id = ? AND id <> ?`, []any{id, profile.String}},
			{`DELETE FROM api_keys WHERE account_id = ? AND key_hash <> ?`, []any{id, keyHash}},
		}
		if err := s.lockFaxes(ctx, tx, id); err != nil {
			return err
		}
		for _, q := range faxDataOf {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return fmt.Errorf("reset account: %w", err)
			}
		}
		for _, st := range steps {
			if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
				return fmt.Errorf("reset account: %w", err)
			}
		}
		return s.forgetRate(ctx, tx, id)
	})
}

// forgetRate deletes the account's request-rate bucket, kept in the
// database when replicas share it (on SQLite it is in the process's memory,
// a few bytes, and refills by itself).
func (s *store) forgetRate(ctx context.Context, tx *sqldb.Tx, accountID string) error {
	if !s.db.Shared() {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM rate_limits WHERE key = ?`, "requests:account:"+accountID); err != nil {
		return fmt.Errorf("forget the account's request rate: %w", err)
	}
	return nil
}

// revokingTx runs f in a transaction (sqldb.InTx), then drops what the
// server cached about keys and applications.
func (s *store) revokingTx(ctx context.Context, f func(*sqldb.Tx) error) error {
	if err := s.db.InTxOnce(ctx, f); err != nil {
		return err
	}
	s.changed()
	return nil
}
