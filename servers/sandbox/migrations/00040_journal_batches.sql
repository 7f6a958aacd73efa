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
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    sandbox_id TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
    entries    INTEGER NOT NULL,
    last_at    BIGINT NOT NULL,
    data       BLOB NOT NULL
);
CREATE INDEX journal_batches_by_sandbox ON journal_batches (sandbox_id, id);

-- +goose Down
DROP TABLE journal_batches;
CREATE TABLE journal (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    sandbox_id         TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
    api                TEXT NOT NULL,
    operation          TEXT NOT NULL,
    method             TEXT NOT NULL,
    path               TEXT NOT NULL,
    query              TEXT NOT NULL,
    status             INTEGER NOT NULL,
    at                 BIGINT NOT NULL,
    duration_micros    BIGINT NOT NULL,
    request_headers    TEXT NOT NULL,
    response_headers   TEXT NOT NULL,
    request_body       BLOB NOT NULL,
    request_truncated  BOOLEAN NOT NULL,
    response_body      BLOB NOT NULL,
    response_truncated BOOLEAN NOT NULL
);
CREATE INDEX journal_by_sandbox ON journal (sandbox_id, seq);
