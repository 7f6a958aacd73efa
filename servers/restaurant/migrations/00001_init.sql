-- +goose Up
-- Portable SQL: the same schema runs on PostgreSQL, where entities.seq is
-- BIGINT GENERATED ALWAYS AS IDENTITY (SQLite's INTEGER PRIMARY KEY is the
-- rowid, assigned in increasing order and never reused since rows are never
-- deleted). Instants are Unix milliseconds, so they compare as numbers on both.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);

CREATE TABLE restaurants (
    guid          TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);

CREATE TABLE api_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    secret_hash   BLOB NOT NULL,
    created_at_ms BIGINT NOT NULL
);

CREATE TABLE client_grants (
    client_id       TEXT NOT NULL REFERENCES api_clients (id),
    restaurant_guid TEXT NOT NULL REFERENCES restaurants (guid),
    PRIMARY KEY (client_id, restaurant_guid)
);

CREATE TABLE tokens (
    hash          BLOB PRIMARY KEY,
    client_id     TEXT NOT NULL REFERENCES api_clients (id),
    expires_at_ms BIGINT NOT NULL
);
CREATE INDEX tokens_by_client ON tokens (client_id);

-- One row per configuration entity of every resource type. seq is the
-- insertion order: immutable, so it is the keyset of every page walk; an
-- update rewrites doc and modified_ms in place and never moves the row.
CREATE TABLE entities (
    seq             INTEGER PRIMARY KEY,
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

-- +goose Down
DROP TABLE entities;
DROP TABLE tokens;
DROP TABLE client_grants;
DROP TABLE api_clients;
DROP TABLE restaurants;
DROP TABLE settings;
