-- +goose Up
-- The per-creator-token rate limit of sandbox creates, shared by every replica
-- (servers/internal/ratelimit); one SQLite process keeps it in memory.
{{if postgres}}
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);
{{end}}
-- +goose Down
{{if postgres}}DROP TABLE rate_limits;
{{end -}}
