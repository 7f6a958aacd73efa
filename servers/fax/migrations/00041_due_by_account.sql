-- +goose Up
-- A claim of the simulator's due steps reads each account's oldest due
-- faxes by this index, without ranking every due fax of a backlog
-- (store.claimDueFaxes).
CREATE INDEX faxes_due_by_account ON faxes (account_id, next_step_at, id) WHERE next_step_at IS NOT NULL;

-- +goose Down
DROP INDEX faxes_due_by_account;
