-- +goose Up
-- Every POST of a webhook event, for the web console: when, where (the URL
-- without its query or user info, which receivers use for secrets), what came
-- back, how long it took, when the next try is due, and the headers sent
-- (the signature is not a secret; the signing key never leaves the server).
-- Both dialects, as 00001: id is SQLite's rowid or a PostgreSQL identity.
CREATE TABLE delivery_attempts (
    id             {{serial}},
    event_seq      BIGINT NOT NULL,
    fax_id         TEXT NOT NULL,
    attempt        INTEGER NOT NULL,
    target         TEXT NOT NULL,
    attempted_at   BIGINT NOT NULL,
    status_code    INTEGER NULL,
    error          TEXT NOT NULL DEFAULT '',
    latency_micros BIGINT NOT NULL,
    next_retry_at  BIGINT NULL,
    headers        TEXT NOT NULL DEFAULT '{}',
    succeeded      BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX delivery_attempts_by_fax ON delivery_attempts (fax_id, event_seq, id);

-- A redelivery is a new outbox row carrying the same event (same data, same
-- event id in the body); redelivery_of is the seq of the row it repeats.
ALTER TABLE outbox ADD COLUMN redelivery_of BIGINT NULL;

-- +goose Down
ALTER TABLE outbox DROP COLUMN redelivery_of;
DROP TABLE delivery_attempts;
