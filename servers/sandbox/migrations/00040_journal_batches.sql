-- +goose Up
-- The request journal, written cheaply: one row per sandbox and commit of the
-- journal writer, holding that commit's entries of the sandbox encoded together
-- and zstd-compressed (servers/sandbox/journalcodec.go). An entry's seq is its
-- row's id times 1024 plus its place in the row. The per-entry table it
-- replaces goes with what it held (test traffic of sandboxes, which a client
-- re-creates). last_at (Unix microseconds) is the latest arrival in the row,
-- for the journal's `since` filter.
DROP TABLE journal;
CREATE TABLE journal_batches (
    id         {{autoincrement}},
    sandbox_id TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
    entries    INTEGER NOT NULL,
    last_at    BIGINT NOT NULL,
    data       {{bytes}} NOT NULL
);
CREATE INDEX journal_batches_by_sandbox ON journal_batches (sandbox_id, id);

-- +goose Down
DROP TABLE journal_batches;
-- The journal table of 00001, as it made it.
{{template "journal"}}
