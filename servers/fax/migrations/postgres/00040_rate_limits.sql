-- +goose Up
-- The per-account request rate limit every replica shares
-- (servers/internal/ratelimit); one SQLite process keeps it in memory.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);
COMMENT ON TABLE rate_limits IS 'apistack: quiet: rate-limit buckets; no replica caches them';

-- +goose Down
DROP TABLE rate_limits;
