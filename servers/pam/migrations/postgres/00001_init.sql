-- +goose Up
-- The PAM schema on PostgreSQL: the final schema of the SQLite set
-- (migrations/sqlite/, 00001 to 00004) in PostgreSQL types, plus the shared
-- rate-limit table. A later migration is written once for both dialects
-- (servers/internal/migrationset), with a version above both sets' last.
--
-- Names and ids are sorted with COLLATE "C" (byte order, as SQLite compares
-- text): the keyset pagination orders by (name, id) and its cursors must
-- compare the same way on every backend and every cluster's locale.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);

CREATE TABLE teams (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    disabled   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE users (
    id         TEXT COLLATE "C" PRIMARY KEY,
    team_id    TEXT NOT NULL REFERENCES teams (id),
    name       TEXT COLLATE "C" NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('human', 'service')),
    status     TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'deleted')),
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (team_id, name)
);
CREATE INDEX users_by_name ON users (team_id, name, id);

CREATE TABLE team_groups (
    id         TEXT COLLATE "C" PRIMARY KEY,
    team_id    TEXT NOT NULL REFERENCES teams (id),
    name       TEXT COLLATE "C" NOT NULL,
    roles      TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    deleted_at TIMESTAMPTZ NULL
);
-- A deleted group's name can be taken again: names are unique among live groups.
CREATE UNIQUE INDEX team_groups_live_name ON team_groups (team_id, name) WHERE deleted_at IS NULL;
CREATE INDEX team_groups_by_name ON team_groups (team_id, name, id);
-- A page of live groups is read from this index alone (an index-only scan).
CREATE INDEX team_groups_live_page ON team_groups (team_id, name, id) INCLUDE (roles, deleted_at) WHERE deleted_at IS NULL;

CREATE TABLE group_members (
    group_id TEXT NOT NULL REFERENCES team_groups (id),
    user_id  TEXT NOT NULL REFERENCES users (id),
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_by_user ON group_members (user_id);

CREATE TABLE service_keys (
    id          TEXT COLLATE "C" PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id),
    secret_hash BYTEA NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NULL,
    deleted_at  TIMESTAMPTZ NULL
);
CREATE INDEX service_keys_by_user ON service_keys (user_id);

CREATE TABLE tokens (
    hash       BYTEA PRIMARY KEY,
    key_id     TEXT NOT NULL REFERENCES service_keys (id),
    user_id    TEXT NOT NULL REFERENCES users (id),
    team_id    TEXT NOT NULL REFERENCES teams (id),
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ NULL
);
CREATE INDEX tokens_by_key ON tokens (key_id);
CREATE INDEX tokens_by_user ON tokens (user_id);

-- Per-team quotas on what a team may create through the API; a missing row
-- means no limit.
CREATE TABLE team_quotas (
    team_id   TEXT NOT NULL REFERENCES teams (id),
    resource  TEXT NOT NULL CHECK (resource IN ('groups', 'service_users', 'keys_per_service_user')),
    max_count INTEGER NOT NULL CHECK (max_count >= 0),
    PRIMARY KEY (team_id, resource)
);
CREATE INDEX group_members_by_group ON group_members (group_id, user_id);

-- The rate limiters' buckets, shared by every replica (ratelimit.Schema):
-- one GCRA theoretical arrival time per key, in Unix microseconds.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);

-- +goose Down
DROP TABLE rate_limits;
DROP TABLE team_quotas;
DROP TABLE tokens;
DROP TABLE service_keys;
DROP TABLE group_members;
DROP TABLE team_groups;
DROP TABLE users;
DROP TABLE teams;
DROP TABLE settings;
