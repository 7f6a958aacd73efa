-- +goose Up
-- Both dialects (servers/internal/migrationset): text ids, booleans as
-- BOOLEAN, bytes as BLOB or BYTEA, outbox.seq SQLite's rowid or a PostgreSQL
-- identity. Instants are BIGINT Unix microseconds in UTC, so they compare and
-- sort the same on both engines.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value {{bytes}} NOT NULL
);

CREATE TABLE accounts (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    key_hash   {{bytes}} NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

CREATE TABLE outbound_voice_profiles (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE fax_applications (
    id                        TEXT PRIMARY KEY,
    account_id                TEXT NOT NULL REFERENCES accounts (id),
    application_name          TEXT NOT NULL,
    webhook_url               TEXT NOT NULL,
    webhook_failover_url      TEXT NOT NULL DEFAULT '',
    outbound_voice_profile_id TEXT NULL REFERENCES outbound_voice_profiles (id),
    created_at                BIGINT NOT NULL,
    updated_at                BIGINT NOT NULL
);
CREATE INDEX fax_applications_by_account ON fax_applications (account_id, created_at, id);

-- A number belongs to one account and is enabled on at most one application.
CREATE TABLE numbers (
    phone_number   TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts (id),
    application_id TEXT NULL
);

CREATE TABLE media (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    content    {{bytes}} NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE faxes (
    id                   TEXT PRIMARY KEY,
    account_id           TEXT NOT NULL REFERENCES accounts (id),
    connection_id        TEXT NOT NULL,
    direction            TEXT NOT NULL CHECK (direction IN ('outbound', 'inbound')),
    from_number          TEXT NOT NULL,
    to_number            TEXT NOT NULL,
    media_url            TEXT NOT NULL DEFAULT '',
    quality              TEXT NOT NULL,
    status               TEXT NOT NULL,
    store_media          BOOLEAN NOT NULL DEFAULT FALSE,
    media_id             TEXT NULL REFERENCES media (id),
    page_count           INTEGER NULL,
    failure_reason       TEXT NULL,
    partial_content      BOOLEAN NULL,
    call_duration_secs   INTEGER NULL,
    webhook_url          TEXT NOT NULL,
    webhook_failover_url TEXT NOT NULL DEFAULT '',
    -- The simulator's state: the outcome it walks towards, the steps left in
    -- the current state, and when the next step is due (NULL: final).
    outcome              TEXT NOT NULL DEFAULT '',
    steps_left           INTEGER NOT NULL DEFAULT 0,
    next_step_at         BIGINT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    deleted_at           BIGINT NULL
);
CREATE INDEX faxes_by_account ON faxes (account_id, created_at, id);
CREATE INDEX faxes_due ON faxes (next_step_at) WHERE next_step_at IS NOT NULL;

-- The webhook outbox: each event is inserted in the transaction of the state
-- change it reports, and delivered from here, in seq order per fax.
CREATE TABLE outbox (
    seq           {{serial}},
    event_id      TEXT NOT NULL UNIQUE,
    fax_id        TEXT NOT NULL,
    event_type    TEXT NOT NULL,
    data          {{bytes}} NOT NULL,
    webhook_url   TEXT NOT NULL,
    failover_url  TEXT NOT NULL DEFAULT '',
    attempts      INTEGER NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    delivered_at  BIGINT NULL,
    delivered_to  TEXT NULL,
    abandoned_at  BIGINT NULL
);
CREATE INDEX outbox_pending ON outbox (seq) WHERE delivered_at IS NULL AND abandoned_at IS NULL;

-- +goose Down
DROP TABLE outbox;
DROP TABLE faxes;
DROP TABLE media;
DROP TABLE numbers;
DROP TABLE fax_applications;
DROP TABLE outbound_voice_profiles;
DROP TABLE api_keys;
DROP TABLE accounts;
DROP TABLE settings;
