-- +goose Up
-- Buckets and keys belong to an account: a key acts on its own account's
-- buckets only. Everything made before accounts existed belongs to 'default',
-- the account the admin API assigns when none is given, so existing keys keep
-- working on existing buckets.
ALTER TABLE buckets ADD COLUMN account TEXT NOT NULL DEFAULT 'default';
ALTER TABLE access_keys ADD COLUMN account TEXT NOT NULL DEFAULT 'default';

-- +goose Down
ALTER TABLE access_keys DROP COLUMN account;
ALTER TABLE buckets DROP COLUMN account;
