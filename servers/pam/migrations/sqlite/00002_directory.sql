-- +goose Up
-- Per-team quotas on what a team may create through the API; a missing row
-- means no limit.
CREATE TABLE team_quotas (
    team_id   TEXT NOT NULL REFERENCES teams (id),
    resource  TEXT NOT NULL CHECK (resource IN ('groups', 'service_users', 'keys_per_service_user')),
    max_count INTEGER NOT NULL CHECK (max_count >= 0),
    PRIMARY KEY (team_id, resource)
);

CREATE INDEX users_by_name ON users (team_id, name, id);
CREATE INDEX group_members_by_group ON group_members (group_id, user_id);

-- +goose Down
DROP INDEX group_members_by_group;
DROP INDEX users_by_name;
DROP TABLE team_quotas;
