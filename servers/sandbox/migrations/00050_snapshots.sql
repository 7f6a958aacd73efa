-- +goose Up
-- The credentials a sandbox's fixture made, by the fixture's names (sealed
-- JSON, by API; '' for none).
ALTER TABLE sandboxes ADD COLUMN named TEXT NOT NULL DEFAULT '';

-- A snapshot of a sandbox: the rows of its tenants copied, in every API
-- that copies them (apis, comma-separated), into a tenant set of its own
-- (named after the snapshot's id) that no credentials reach; the sandbox's
-- clock mode and time (clock_time, Unix microseconds) and its faults
-- (snapshot_faults). credentials and named are the copied set's, sealed.
-- state is 'creating' while the rows are copied and 'deleting' once a
-- delete began: only 'ready' snapshots fork; the sweep finishes what a
-- crash left half done, and deletes snapshots past created_at + ttl_micros.
-- sandbox_id names the sandbox it was made of, which may be gone since.
CREATE TABLE snapshots (
    id          TEXT PRIMARY KEY,
    sandbox_id  TEXT NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('creating', 'ready', 'deleting')),
    clock       TEXT NOT NULL CHECK (clock IN ('frozen', 'real')),
    clock_time  BIGINT NOT NULL,
    ttl_micros  BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    apis        TEXT NOT NULL DEFAULT '',
    credentials TEXT NOT NULL DEFAULT '',
    named       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX snapshots_by_sandbox ON snapshots (sandbox_id, created_at);

-- The faults of a snapshot's sandbox as they were (faults' columns, less
-- the sandbox and the id: a fork gives them new ids).
CREATE TABLE snapshot_faults (
    snapshot_id        TEXT NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
    seq                BIGINT NOT NULL,
    kind               TEXT NOT NULL,
    api                TEXT NOT NULL,
    operation          TEXT NOT NULL,
    count              INTEGER NOT NULL,
    share_ppm          INTEGER NOT NULL,
    retry_after_micros BIGINT NOT NULL,
    delay_micros       BIGINT NOT NULL,
    attempt            INTEGER NOT NULL,
    taken              INTEGER NOT NULL,
    created_at         BIGINT NOT NULL,
    PRIMARY KEY (snapshot_id, seq)
);

-- +goose Down
DROP TABLE snapshot_faults;
DROP TABLE snapshots;
ALTER TABLE sandboxes DROP COLUMN named;
