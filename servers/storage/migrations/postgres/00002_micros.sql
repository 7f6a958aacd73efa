-- +goose Up
-- Instants as every schema keeps them (sqldb.Micros): BIGINT Unix
-- microseconds in UTC. EXTRACT(EPOCH ...) is exact (numeric) in PostgreSQL 14+.
ALTER TABLE buckets ALTER COLUMN created_at TYPE BIGINT USING (EXTRACT(EPOCH FROM created_at) * 1000000)::BIGINT;
ALTER TABLE access_keys ALTER COLUMN created_at TYPE BIGINT USING (EXTRACT(EPOCH FROM created_at) * 1000000)::BIGINT;
ALTER TABLE lifecycle_configurations ALTER COLUMN updated_at TYPE BIGINT USING (EXTRACT(EPOCH FROM updated_at) * 1000000)::BIGINT;

-- +goose Down
ALTER TABLE lifecycle_configurations ALTER COLUMN updated_at TYPE TIMESTAMPTZ USING to_timestamp(updated_at / 1000000.0);
ALTER TABLE access_keys ALTER COLUMN created_at TYPE TIMESTAMPTZ USING to_timestamp(created_at / 1000000.0);
ALTER TABLE buckets ALTER COLUMN created_at TYPE TIMESTAMPTZ USING to_timestamp(created_at / 1000000.0);
