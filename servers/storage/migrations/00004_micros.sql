-- +goose Up
-- Instants as every schema keeps them (sqldb.Micros): BIGINT Unix
-- microseconds in UTC. SQLite cannot change a column's type: each TIMESTAMP
-- column is copied into a new BIGINT one (apistack_micros reads the text the
-- driver wrote, sqlitedb.MicrosFunction), dropped, and the new one takes its
-- name. ADD COLUMN ... NOT NULL needs a default; no insert relies on it.
ALTER TABLE buckets ADD COLUMN created_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE buckets SET created_at_us = apistack_micros(created_at);
ALTER TABLE buckets DROP COLUMN created_at;
ALTER TABLE buckets RENAME COLUMN created_at_us TO created_at;

ALTER TABLE access_keys ADD COLUMN created_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE access_keys SET created_at_us = apistack_micros(created_at);
ALTER TABLE access_keys DROP COLUMN created_at;
ALTER TABLE access_keys RENAME COLUMN created_at_us TO created_at;

ALTER TABLE lifecycle_configurations ADD COLUMN updated_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE lifecycle_configurations SET updated_at_us = apistack_micros(updated_at);
ALTER TABLE lifecycle_configurations DROP COLUMN updated_at;
ALTER TABLE lifecycle_configurations RENAME COLUMN updated_at_us TO updated_at;

-- +goose Down
-- Back to TIMESTAMP, in the text form the driver writes for a UTC time.
ALTER TABLE lifecycle_configurations ADD COLUMN updated_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE lifecycle_configurations SET updated_at_ts = strftime('%Y-%m-%d %H:%M:%f', updated_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
ALTER TABLE lifecycle_configurations DROP COLUMN updated_at;
ALTER TABLE lifecycle_configurations RENAME COLUMN updated_at_ts TO updated_at;

ALTER TABLE access_keys ADD COLUMN created_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE access_keys SET created_at_ts = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
ALTER TABLE access_keys DROP COLUMN created_at;
ALTER TABLE access_keys RENAME COLUMN created_at_ts TO created_at;

ALTER TABLE buckets ADD COLUMN created_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE buckets SET created_at_ts = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
ALTER TABLE buckets DROP COLUMN created_at;
ALTER TABLE buckets RENAME COLUMN created_at_ts TO created_at;
