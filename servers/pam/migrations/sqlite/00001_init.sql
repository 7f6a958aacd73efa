-- +goose Up
-- Portable SQL: the same schema runs on PostgreSQL (text ids, booleans as
-- BOOLEAN, partial unique index). Instants are BIGINT Unix microseconds in UTC
-- (sqldb.Micros); a file made before 00005 declared them TIMESTAMP, and 00005
-- converted its values.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);

CREATE TABLE teams (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    disabled   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL
);

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    team_id    TEXT NOT NULL REFERENCES teams (id),
    name       TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('human', 'service')),
    status     TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'deleted')),
    created_at BIGINT NOT NULL,
    UNIQUE (team_id, name)
);

CREATE TABLE team_groups (
    id         TEXT PRIMARY KEY,
    team_id    TEXT NOT NULL REFERENCES teams (id),
    name       TEXT NOT NULL,
    roles      TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    deleted_at BIGINT NULL
);
-- A deleted group's name can be taken again: names are unique among live groups.
CREATE UNIQUE INDEX team_groups_live_name ON team_groups (team_id, name) WHERE deleted_at IS NULL;
CREATE INDEX team_groups_by_name ON team_groups (team_id, name, id);

CREATE TABLE group_members (
    group_id TEXT NOT NULL REFERENCES team_groups (id),
    user_id  TEXT NOT NULL REFERENCES users (id),
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_by_user ON group_members (user_id);

CREATE TABLE service_keys (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    secret_hash BLOB NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NULL,
    deleted_at  BIGINT NULL
);
CREATE INDEX service_keys_by_user ON service_keys (user_id);

CREATE TABLE tokens (
    hash       BLOB PRIMARY KEY,
    key_id     TEXT NOT NULL REFERENCES service_keys (id),
    user_id    TEXT NOT NULL REFERENCES users (id),
    team_id    TEXT NOT NULL REFERENCES teams (id),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX tokens_by_key ON tokens (key_id);

-- +goose Down
DROP TABLE tokens;
DROP TABLE service_keys;
DROP TABLE group_members;
DROP TABLE team_groups;
DROP TABLE users;
DROP TABLE teams;
DROP TABLE settings;
