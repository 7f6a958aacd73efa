-- +goose Up
-- Rate-limit buckets, written by nearly every request, make no write-ahead
-- log and wait for no flush of it; after a crash of PostgreSQL they start
-- full (docs/scaling-out.md, "Rate limits").
ALTER TABLE rate_limits SET UNLOGGED;

-- +goose Down
ALTER TABLE rate_limits SET LOGGED;
