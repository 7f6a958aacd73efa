-- +goose Up
-- The storage schema on PostgreSQL: the final SQLite schema (migrations/sqlite/,
-- accounts and the protocol namespace included) in PostgreSQL types. A later
-- migration is written once for both dialects (servers/internal/migrationset),
-- with a version above both sets' last.
--
-- Names are listed in byte order (ORDER BY name, key_id), as SQLite compares
-- text: COLLATE "C" keeps that order whatever the cluster's locale.
CREATE TABLE buckets (
    name       TEXT COLLATE "C" PRIMARY KEY,
    account    TEXT NOT NULL DEFAULT 'default',
    versioning TEXT NOT NULL DEFAULT 'Unversioned' CHECK (versioning IN ('Unversioned', 'Enabled', 'Suspended')),
    created_at TIMESTAMPTZ NOT NULL
);

-- A SigV4 verifier needs the secret itself (it recomputes the HMAC), so the
-- secret is stored sealed under the master key, not hashed.
CREATE TABLE access_keys (
    key_id      TEXT COLLATE "C" PRIMARY KEY,
    account     TEXT NOT NULL DEFAULT 'default',
    secret      TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL
);

-- The document is stored as the service re-encodes it from the validated
-- types, never as the bytes received.
CREATE TABLE lifecycle_configurations (
    bucket     TEXT COLLATE "C" PRIMARY KEY REFERENCES buckets (name) ON DELETE CASCADE,
    document   TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE lifecycle_configurations;
DROP TABLE access_keys;
DROP TABLE buckets;
