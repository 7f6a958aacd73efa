-- +goose Up
-- Instants as every schema keeps them (sqldb.Micros): BIGINT Unix
-- microseconds in UTC, in columns named *_at. The milliseconds stored so far
-- become microseconds; the index on modified_ms follows its column.
ALTER TABLE restaurants RENAME COLUMN created_at_ms TO created_at;
UPDATE restaurants SET created_at = created_at * 1000;
ALTER TABLE api_clients RENAME COLUMN created_at_ms TO created_at;
UPDATE api_clients SET created_at = created_at * 1000;
ALTER TABLE tokens RENAME COLUMN expires_at_ms TO expires_at;
UPDATE tokens SET expires_at = expires_at * 1000;
ALTER TABLE entities RENAME COLUMN created_ms TO created_at;
ALTER TABLE entities RENAME COLUMN modified_ms TO modified_at;
UPDATE entities SET created_at = created_at * 1000, modified_at = modified_at * 1000;

-- +goose Down
UPDATE entities SET created_at = created_at / 1000, modified_at = modified_at / 1000;
ALTER TABLE entities RENAME COLUMN modified_at TO modified_ms;
ALTER TABLE entities RENAME COLUMN created_at TO created_ms;
UPDATE tokens SET expires_at = expires_at / 1000;
ALTER TABLE tokens RENAME COLUMN expires_at TO expires_at_ms;
UPDATE api_clients SET created_at = created_at / 1000;
ALTER TABLE api_clients RENAME COLUMN created_at TO created_at_ms;
UPDATE restaurants SET created_at = created_at / 1000;
ALTER TABLE restaurants RENAME COLUMN created_at TO created_at_ms;
