-- +goose Up
-- The request journal, written cheaply: one row per sandbox and commit of the
-- journal writer, holding that commit's entries of the sandbox encoded together
-- and zstd-compressed (servers/sandbox/journalcodec.go). An entry's seq is its
-- row's id times 1024 plus its place in the row. The per-entry table it
-- replaces is converted first: each of its entries becomes a row of one entry
-- in the journal's JSON form (servers/sandbox/journalcodec.go), in order.
-- last_at (Unix microseconds) is the latest arrival in the row, for the
-- journal's `since` filter.
CREATE TABLE journal_batches (
    id         {{autoincrement}},
    sandbox_id TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
    entries    INTEGER NOT NULL,
    last_at    BIGINT NOT NULL,
    data       {{bytes}} NOT NULL
);
CREATE INDEX journal_batches_by_sandbox ON journal_batches (sandbox_id, id);
{{if sqlite}}
INSERT INTO journal_batches (sandbox_id, entries, last_at, data)
SELECT sandbox_id, 1, at, CAST(X'03' || json_object('api', api, 'operation', operation, 'method', method, 'path', path,
    'query', query, 'status', status, 'at', at, 'duration_micros', duration_micros,
    'request_headers', json(request_headers), 'response_headers', json(response_headers),
    'request_body', hex(request_body), 'request_truncated', request_truncated,
    'response_body', hex(response_body), 'response_truncated', response_truncated) AS BLOB)
FROM journal ORDER BY seq;
{{end}}{{if postgres}}
INSERT INTO journal_batches (sandbox_id, entries, last_at, data)
SELECT sandbox_id, 1, at, '\x03'::bytea || convert_to(json_build_object('api', api, 'operation', operation, 'method', method,
    'path', path, 'query', query, 'status', status, 'at', at, 'duration_micros', duration_micros,
    'request_headers', request_headers::json, 'response_headers', response_headers::json,
    'request_body', encode(request_body, 'hex'), 'request_truncated', request_truncated,
    'response_body', encode(response_body, 'hex'), 'response_truncated', response_truncated)::text, 'UTF8')
FROM journal ORDER BY seq;
{{end}}
DROP TABLE journal;

-- +goose Down
DROP TABLE journal_batches;
-- The journal table of 00001, as it made it.
{{template "journal"}}
