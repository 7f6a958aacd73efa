-- +goose Up
-- Portable SQL: the same schema runs on PostgreSQL (text keys, booleans as
-- BOOLEAN). Instants are BIGINT Unix microseconds in UTC (sqldb.Micros); a
-- file made before 00004 declared them TIMESTAMP, and 00004 converted its values.
CREATE TABLE buckets (
    name       TEXT PRIMARY KEY,
    versioning TEXT NOT NULL DEFAULT 'Unversioned' CHECK (versioning IN ('Unversioned', 'Enabled', 'Suspended')),
    created_at BIGINT NOT NULL
);

-- A SigV4 verifier needs the secret itself (it recomputes the HMAC), so the
-- secret is stored, not a hash of it, as object storage services do.
CREATE TABLE access_keys (
    key_id      TEXT PRIMARY KEY,
    secret      TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL
);

-- The document is stored as the service re-encodes it from the validated
-- types, never as the bytes received.
CREATE TABLE lifecycle_configurations (
    bucket     TEXT PRIMARY KEY REFERENCES buckets (name) ON DELETE CASCADE,
    document   TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE lifecycle_configurations;
DROP TABLE access_keys;
DROP TABLE buckets;
