-- +goose Up
-- How many of a sandbox's journal entries were dropped, oldest first, to keep
-- its journal within its budget (entries and bytes).
ALTER TABLE sandboxes ADD COLUMN journal_dropped BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE sandboxes DROP COLUMN journal_dropped;
