-- +goose Up
-- A sandbox: one tenant set (named after its id) in every API, its own token
-- (stored as its SHA-256), its clock mode and TTL, and its credentials
-- (sealed with the master key). state is 'creating' while its tenants are
-- seeded and 'deleting' once a delete began: only 'ready' sandboxes answer
-- their token; the sweep finishes what a crash left half done. Instants are
-- Unix microseconds.
CREATE TABLE sandboxes (
    id           TEXT PRIMARY KEY,
    token_hash   {{bytes}} NOT NULL UNIQUE,
    clock        TEXT NOT NULL CHECK (clock IN ('frozen', 'real')),
    ttl_micros   BIGINT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('creating', 'ready', 'deleting')),
    credentials  TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL
);

-- The request journal: every request a sandbox's credentials made, with its
-- answer, secrets redacted and bodies capped. An entry cannot outlive its
-- sandbox (the foreign key refuses a late write and a delete takes them all).
-- 00040 replaced it; its Down puts this table back (the "journal" block).
{{block "journal" .}}CREATE TABLE journal (
    seq                {{autoincrement}},
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
    request_body       {{bytes}} NOT NULL,
    request_truncated  BOOLEAN NOT NULL,
    response_body      {{bytes}} NOT NULL,
    response_truncated BOOLEAN NOT NULL
);
CREATE INDEX journal_by_sandbox ON journal (sandbox_id, seq);{{end}}

-- +goose Down
DROP TABLE journal;
DROP TABLE sandboxes;
