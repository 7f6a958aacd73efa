-- +goose Up
-- What each sandbox's journal holds (its entries, and the bytes its rows
-- take), kept by every commit of the journal writer and every drop, so that
-- keeping a journal within its budget reads its oldest rows only, not a sum
-- over all of them at every commit.
ALTER TABLE sandboxes ADD COLUMN journal_entries BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sandboxes ADD COLUMN journal_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE sandboxes SET
    journal_entries = (SELECT COALESCE(SUM(entries), 0) FROM journal_batches WHERE sandbox_id = sandboxes.id),
    journal_bytes = (SELECT COALESCE(SUM(LENGTH(data)), 0) FROM journal_batches WHERE sandbox_id = sandboxes.id);

-- +goose Down
ALTER TABLE sandboxes DROP COLUMN journal_bytes;
ALTER TABLE sandboxes DROP COLUMN journal_entries;
