-- +goose Up
-- Instants as every schema keeps them (sqldb.Micros): BIGINT Unix
-- microseconds in UTC. A file made before this migration holds TIMESTAMP
-- columns filled with the text the driver wrote for a time.Time;
-- apistack_micros (sqlitedb.MicrosFunction) turns each value into its
-- microseconds, exactly, and leaves an integer as it is. The columns keep
-- their declared type there (changing it would rebuild every table; the
-- NUMERIC affinity of TIMESTAMP stores an integer as an integer, and the
-- driver reads it as one); a new file declares them BIGINT (00001 and 00003).
UPDATE teams SET created_at = apistack_micros(created_at);
UPDATE users SET created_at = apistack_micros(created_at);
UPDATE team_groups SET created_at = apistack_micros(created_at), deleted_at = apistack_micros(deleted_at);
UPDATE service_keys SET created_at = apistack_micros(created_at), expires_at = apistack_micros(expires_at), deleted_at = apistack_micros(deleted_at);
UPDATE tokens SET created_at = apistack_micros(created_at), expires_at = apistack_micros(expires_at), revoked_at = apistack_micros(revoked_at);

-- +goose Down
-- Back to the driver's text of a UTC time.Time, which a TIMESTAMP column of
-- a file made before this migration reads as one.
UPDATE tokens SET created_at = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC', expires_at = strftime('%Y-%m-%d %H:%M:%f', expires_at / 1000000.0, 'unixepoch') || ' +0000 UTC', revoked_at = strftime('%Y-%m-%d %H:%M:%f', revoked_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
UPDATE service_keys SET created_at = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC', expires_at = strftime('%Y-%m-%d %H:%M:%f', expires_at / 1000000.0, 'unixepoch') || ' +0000 UTC', deleted_at = strftime('%Y-%m-%d %H:%M:%f', deleted_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
UPDATE team_groups SET created_at = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC', deleted_at = strftime('%Y-%m-%d %H:%M:%f', deleted_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
UPDATE users SET created_at = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
UPDATE teams SET created_at = strftime('%Y-%m-%d %H:%M:%f', created_at / 1000000.0, 'unixepoch') || ' +0000 UTC';
