-- +goose Up
-- Instants as every schema keeps them (sqldb.Micros): BIGINT Unix
-- microseconds in UTC. A file made before this migration holds TIMESTAMP
-- columns filled with the text the driver wrote for a time.Time;
-- apistack_micros (sqlitedb.MicrosFunction) turns each value into its
-- microseconds, exactly, and leaves an integer as it is. The columns keep
-- their declared type there (changing it would rebuild every table; the
-- NUMERIC affinity of TIMESTAMP stores an integer as an integer, and the
-- driver reads it as one); a new file declares them BIGINT (00001).
UPDATE buckets SET created_at = apistack_micros(created_at);
UPDATE access_keys SET created_at = apistack_micros(created_at);
UPDATE lifecycle_configurations SET updated_at = apistack_micros(updated_at);

-- +goose Down
-- Back to the driver's text of a UTC time.Time, which a TIMESTAMP column of
-- a file made before this migration reads as one.
UPDATE lifecycle_configurations SET updated_at = strftime('%Y-%m-%d %H:%M:%f', updated_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
UPDATE access_keys SET created_at = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
UPDATE buckets SET created_at = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
