-- +goose Up
-- Instants as every schema keeps them (sqldb.Micros): BIGINT Unix
-- microseconds in UTC. EXTRACT(EPOCH ...) is exact (numeric) in PostgreSQL 14+.
ALTER TABLE teams ALTER COLUMN created_at TYPE BIGINT USING (EXTRACT(EPOCH FROM created_at) * 1000000)::BIGINT;
ALTER TABLE users ALTER COLUMN created_at TYPE BIGINT USING (EXTRACT(EPOCH FROM created_at) * 1000000)::BIGINT;
ALTER TABLE team_groups ALTER COLUMN created_at TYPE BIGINT USING (EXTRACT(EPOCH FROM created_at) * 1000000)::BIGINT;
ALTER TABLE team_groups ALTER COLUMN deleted_at TYPE BIGINT USING (EXTRACT(EPOCH FROM deleted_at) * 1000000)::BIGINT;
ALTER TABLE service_keys ALTER COLUMN created_at TYPE BIGINT USING (EXTRACT(EPOCH FROM created_at) * 1000000)::BIGINT;
ALTER TABLE service_keys ALTER COLUMN expires_at TYPE BIGINT USING (EXTRACT(EPOCH FROM expires_at) * 1000000)::BIGINT;
ALTER TABLE service_keys ALTER COLUMN deleted_at TYPE BIGINT USING (EXTRACT(EPOCH FROM deleted_at) * 1000000)::BIGINT;
ALTER TABLE tokens ALTER COLUMN created_at TYPE BIGINT USING (EXTRACT(EPOCH FROM created_at) * 1000000)::BIGINT;
ALTER TABLE tokens ALTER COLUMN expires_at TYPE BIGINT USING (EXTRACT(EPOCH FROM expires_at) * 1000000)::BIGINT;
ALTER TABLE tokens ALTER COLUMN revoked_at TYPE BIGINT USING (EXTRACT(EPOCH FROM revoked_at) * 1000000)::BIGINT;

-- +goose Down
ALTER TABLE tokens ALTER COLUMN revoked_at TYPE TIMESTAMPTZ USING to_timestamp(revoked_at / 1000000.0);
ALTER TABLE tokens ALTER COLUMN expires_at TYPE TIMESTAMPTZ USING to_timestamp(expires_at / 1000000.0);
ALTER TABLE tokens ALTER COLUMN created_at TYPE TIMESTAMPTZ USING to_timestamp(created_at / 1000000.0);
ALTER TABLE service_keys ALTER COLUMN deleted_at TYPE TIMESTAMPTZ USING to_timestamp(deleted_at / 1000000.0);
ALTER TABLE service_keys ALTER COLUMN expires_at TYPE TIMESTAMPTZ USING to_timestamp(expires_at / 1000000.0);
ALTER TABLE service_keys ALTER COLUMN created_at TYPE TIMESTAMPTZ USING to_timestamp(created_at / 1000000.0);
ALTER TABLE team_groups ALTER COLUMN deleted_at TYPE TIMESTAMPTZ USING to_timestamp(deleted_at / 1000000.0);
ALTER TABLE team_groups ALTER COLUMN created_at TYPE TIMESTAMPTZ USING to_timestamp(created_at / 1000000.0);
ALTER TABLE users ALTER COLUMN created_at TYPE TIMESTAMPTZ USING to_timestamp(created_at / 1000000.0);
ALTER TABLE teams ALTER COLUMN created_at TYPE TIMESTAMPTZ USING to_timestamp(created_at / 1000000.0);
