-- +goose Up
-- A sandbox's faults (the sandbox API's /sandboxes/{id}/faults): request
-- faults name their api (and, optionally, operation); webhook faults have
-- api ''. count 0 means no limit; taken counts the requests (or deliveries)
-- taken, on every replica: a take is one UPDATE ... WHERE taken < count, so
-- count is exact however many replicas share the database. Durations are
-- microseconds, share_ppm the chance in millionths (0: none); seq orders a sandbox's faults (the first that takes a
-- request acts on it).
CREATE TABLE faults (
    id                 TEXT PRIMARY KEY,
    sandbox_id         TEXT NOT NULL REFERENCES sandboxes (id) ON DELETE CASCADE,
    seq                BIGINT NOT NULL,
    kind               TEXT NOT NULL,
    api                TEXT NOT NULL,
    operation          TEXT NOT NULL,
    count              INTEGER NOT NULL CHECK (count >= 0),
    share_ppm          INTEGER NOT NULL CHECK (share_ppm >= 0 AND share_ppm <= 1000000),
    retry_after_micros BIGINT NOT NULL,
    delay_micros       BIGINT NOT NULL,
    attempt            INTEGER NOT NULL,
    taken              INTEGER NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL
);
CREATE INDEX faults_by_sandbox ON faults (sandbox_id, seq);

-- +goose Down
DROP TABLE faults;
