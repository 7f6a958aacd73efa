-- +goose Up
-- Instants as every schema keeps them (sqldb.Micros): BIGINT Unix
-- microseconds in UTC. SQLite cannot change a column's type: each TIMESTAMP
-- column is copied into a new BIGINT one (apistack_micros reads the text the
-- driver wrote, sqlitedb.MicrosFunction), dropped, and the new one takes its
-- name; the two indexes on team_groups.deleted_at are made again around it.
-- ADD COLUMN ... NOT NULL needs a default; no insert relies on it.
DROP INDEX team_groups_live_name;
DROP INDEX team_groups_live_page;

ALTER TABLE teams ADD COLUMN created_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE teams SET created_at_us = apistack_micros(created_at);
ALTER TABLE teams DROP COLUMN created_at;
ALTER TABLE teams RENAME COLUMN created_at_us TO created_at;

ALTER TABLE users ADD COLUMN created_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE users SET created_at_us = apistack_micros(created_at);
ALTER TABLE users DROP COLUMN created_at;
ALTER TABLE users RENAME COLUMN created_at_us TO created_at;

ALTER TABLE team_groups ADD COLUMN created_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE team_groups SET created_at_us = apistack_micros(created_at);
ALTER TABLE team_groups DROP COLUMN created_at;
ALTER TABLE team_groups RENAME COLUMN created_at_us TO created_at;

ALTER TABLE team_groups ADD COLUMN deleted_at_us BIGINT NULL;
UPDATE team_groups SET deleted_at_us = apistack_micros(deleted_at);
ALTER TABLE team_groups DROP COLUMN deleted_at;
ALTER TABLE team_groups RENAME COLUMN deleted_at_us TO deleted_at;

ALTER TABLE service_keys ADD COLUMN created_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE service_keys SET created_at_us = apistack_micros(created_at);
ALTER TABLE service_keys DROP COLUMN created_at;
ALTER TABLE service_keys RENAME COLUMN created_at_us TO created_at;

ALTER TABLE service_keys ADD COLUMN expires_at_us BIGINT NULL;
UPDATE service_keys SET expires_at_us = apistack_micros(expires_at);
ALTER TABLE service_keys DROP COLUMN expires_at;
ALTER TABLE service_keys RENAME COLUMN expires_at_us TO expires_at;

ALTER TABLE service_keys ADD COLUMN deleted_at_us BIGINT NULL;
UPDATE service_keys SET deleted_at_us = apistack_micros(deleted_at);
ALTER TABLE service_keys DROP COLUMN deleted_at;
ALTER TABLE service_keys RENAME COLUMN deleted_at_us TO deleted_at;

ALTER TABLE tokens ADD COLUMN created_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE tokens SET created_at_us = apistack_micros(created_at);
ALTER TABLE tokens DROP COLUMN created_at;
ALTER TABLE tokens RENAME COLUMN created_at_us TO created_at;

ALTER TABLE tokens ADD COLUMN expires_at_us BIGINT NOT NULL DEFAULT 0;
UPDATE tokens SET expires_at_us = apistack_micros(expires_at);
ALTER TABLE tokens DROP COLUMN expires_at;
ALTER TABLE tokens RENAME COLUMN expires_at_us TO expires_at;

ALTER TABLE tokens ADD COLUMN revoked_at_us BIGINT NULL;
UPDATE tokens SET revoked_at_us = apistack_micros(revoked_at);
ALTER TABLE tokens DROP COLUMN revoked_at;
ALTER TABLE tokens RENAME COLUMN revoked_at_us TO revoked_at;
CREATE UNIQUE INDEX team_groups_live_name ON team_groups (team_id, name) WHERE deleted_at IS NULL;
CREATE INDEX team_groups_live_page ON team_groups (team_id, name, id, roles, deleted_at) WHERE deleted_at IS NULL;

-- +goose Down
-- Back to TIMESTAMP, in the text form the driver writes for a UTC time.
DROP INDEX team_groups_live_name;
DROP INDEX team_groups_live_page;

ALTER TABLE tokens ADD COLUMN revoked_at_ts TIMESTAMP NULL;
UPDATE tokens SET revoked_at_ts = strftime('%Y-%m-%d %H:%M:%f', revoked_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE revoked_at IS NOT NULL;
ALTER TABLE tokens DROP COLUMN revoked_at;
ALTER TABLE tokens RENAME COLUMN revoked_at_ts TO revoked_at;

ALTER TABLE tokens ADD COLUMN expires_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE tokens SET expires_at_ts = strftime('%Y-%m-%d %H:%M:%f', expires_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE expires_at IS NOT NULL;
ALTER TABLE tokens DROP COLUMN expires_at;
ALTER TABLE tokens RENAME COLUMN expires_at_ts TO expires_at;

ALTER TABLE tokens ADD COLUMN created_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE tokens SET created_at_ts = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE created_at IS NOT NULL;
ALTER TABLE tokens DROP COLUMN created_at;
ALTER TABLE tokens RENAME COLUMN created_at_ts TO created_at;

ALTER TABLE service_keys ADD COLUMN deleted_at_ts TIMESTAMP NULL;
UPDATE service_keys SET deleted_at_ts = strftime('%Y-%m-%d %H:%M:%f', deleted_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE deleted_at IS NOT NULL;
ALTER TABLE service_keys DROP COLUMN deleted_at;
ALTER TABLE service_keys RENAME COLUMN deleted_at_ts TO deleted_at;

ALTER TABLE service_keys ADD COLUMN expires_at_ts TIMESTAMP NULL;
UPDATE service_keys SET expires_at_ts = strftime('%Y-%m-%d %H:%M:%f', expires_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE expires_at IS NOT NULL;
ALTER TABLE service_keys DROP COLUMN expires_at;
ALTER TABLE service_keys RENAME COLUMN expires_at_ts TO expires_at;

ALTER TABLE service_keys ADD COLUMN created_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE service_keys SET created_at_ts = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE created_at IS NOT NULL;
ALTER TABLE service_keys DROP COLUMN created_at;
ALTER TABLE service_keys RENAME COLUMN created_at_ts TO created_at;

ALTER TABLE team_groups ADD COLUMN deleted_at_ts TIMESTAMP NULL;
UPDATE team_groups SET deleted_at_ts = strftime('%Y-%m-%d %H:%M:%f', deleted_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE deleted_at IS NOT NULL;
ALTER TABLE team_groups DROP COLUMN deleted_at;
ALTER TABLE team_groups RENAME COLUMN deleted_at_ts TO deleted_at;

ALTER TABLE team_groups ADD COLUMN created_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE team_groups SET created_at_ts = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE created_at IS NOT NULL;
ALTER TABLE team_groups DROP COLUMN created_at;
ALTER TABLE team_groups RENAME COLUMN created_at_ts TO created_at;

ALTER TABLE users ADD COLUMN created_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE users SET created_at_ts = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE created_at IS NOT NULL;
ALTER TABLE users DROP COLUMN created_at;
ALTER TABLE users RENAME COLUMN created_at_ts TO created_at;

ALTER TABLE teams ADD COLUMN created_at_ts TIMESTAMP NOT NULL DEFAULT '';
UPDATE teams SET created_at_ts = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC' WHERE created_at IS NOT NULL;
ALTER TABLE teams DROP COLUMN created_at;
ALTER TABLE teams RENAME COLUMN created_at_ts TO created_at;
CREATE UNIQUE INDEX team_groups_live_name ON team_groups (team_id, name) WHERE deleted_at IS NULL;
CREATE INDEX team_groups_live_page ON team_groups (team_id, name, id, roles, deleted_at) WHERE deleted_at IS NULL;
