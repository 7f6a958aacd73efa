-- +goose Up
-- Replicas sharing the database claim the simulator's due steps and the
-- outbox's deliverable events: claimed_by names the replica, lease_until
-- (Unix microseconds) is when another replica may take the work over.
ALTER TABLE faxes ADD COLUMN claimed_by TEXT NULL;
ALTER TABLE faxes ADD COLUMN lease_until BIGINT NULL;
CREATE INDEX faxes_claimed ON faxes (account_id) WHERE claimed_by IS NOT NULL;
ALTER TABLE outbox ADD COLUMN claimed_by TEXT NULL;
ALTER TABLE outbox ADD COLUMN lease_until BIGINT NULL;
CREATE INDEX outbox_pending_by_fax ON outbox (fax_id, seq) WHERE delivered_at IS NULL AND abandoned_at IS NULL;
CREATE INDEX outbox_claimed ON outbox (lease_until, fax_id) WHERE claimed_by IS NOT NULL AND delivered_at IS NULL AND abandoned_at IS NULL;

-- +goose Down
DROP INDEX outbox_claimed;
DROP INDEX outbox_pending_by_fax;
ALTER TABLE outbox DROP COLUMN lease_until;
ALTER TABLE outbox DROP COLUMN claimed_by;
DROP INDEX faxes_claimed;
ALTER TABLE faxes DROP COLUMN lease_until;
ALTER TABLE faxes DROP COLUMN claimed_by;
