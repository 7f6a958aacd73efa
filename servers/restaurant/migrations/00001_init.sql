-- +goose Up
-- Both dialects (servers/internal/migrationset): bytes as BLOB or BYTEA,
-- entities.seq SQLite's rowid or a PostgreSQL identity, and on PostgreSQL the
-- rate limits every replica shares. Instants are Unix milliseconds, so they
-- compare as numbers on both (00002 made them microseconds).
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value {{bytes}} NOT NULL
);

CREATE TABLE restaurants (
    guid          TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);

CREATE TABLE api_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    secret_hash   {{bytes}} NOT NULL,
    created_at_ms BIGINT NOT NULL
);

CREATE TABLE client_grants (
    client_id       TEXT NOT NULL REFERENCES api_clients (id),
    restaurant_guid TEXT NOT NULL REFERENCES restaurants (guid),
    PRIMARY KEY (client_id, restaurant_guid)
);

CREATE TABLE tokens (
    hash          {{bytes}} PRIMARY KEY,
    client_id     TEXT NOT NULL REFERENCES api_clients (id),
    expires_at_ms BIGINT NOT NULL
);
CREATE INDEX tokens_by_client ON tokens (client_id);

-- One row per configuration entity of every resource type. seq is the
-- insertion order: immutable, so it is the keyset of every page walk; an
-- update rewrites doc and modified_ms in place and never moves the row.
-- SQLite's rowid is assigned in increasing order (and never reused, since
-- rows are never deleted); on PostgreSQL the store's writing transactions
-- run one at a time (sqldb's advisory lock), so seq values become visible in
-- increasing order too, and a page walk never skips a row committed behind it.
CREATE TABLE entities (
    seq             {{serial}},
    restaurant_guid TEXT NOT NULL REFERENCES restaurants (guid),
    kind            TEXT NOT NULL,
    guid            TEXT NOT NULL,
    external_id     TEXT NULL,
    doc             TEXT NOT NULL,
    created_ms      BIGINT NOT NULL,
    modified_ms     BIGINT NOT NULL,
    archived        BOOLEAN NOT NULL DEFAULT FALSE,
    removed         BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (restaurant_guid, kind, guid)
);
CREATE INDEX entities_page ON entities (restaurant_guid, kind, seq);
CREATE INDEX entities_modified ON entities (restaurant_guid, kind, modified_ms);
{{if postgres}}
-- The per-restaurant rate limits every replica shares (servers/internal/ratelimit);
-- one SQLite process keeps them in memory.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);
{{end}}
-- +goose Down
{{if postgres}}DROP TABLE rate_limits;
{{end -}}
DROP TABLE entities;
DROP TABLE tokens;
DROP TABLE client_grants;
DROP TABLE api_clients;
DROP TABLE restaurants;
DROP TABLE settings;
