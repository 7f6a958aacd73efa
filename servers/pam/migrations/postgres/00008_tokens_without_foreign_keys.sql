-- +goose Up
-- A token row names its key, user and team; it no longer declares them as
-- foreign keys. Each foreign key's check on insert locks its parent row
-- (SELECT ... FOR KEY SHARE): every token exchange of one identity locked
-- the same key, user and team rows, concurrent exchanges sharing each lock
-- through a multixact, and the checks were most of PostgreSQL's time per
-- exchange (docs/scale-out-benchmarks.md, "Tokens without foreign keys").
-- Nothing depended on them: keys are deleted by setting deleted_at, and
-- rows are deleted only with their team (a sandbox's removal or reset),
-- tokens first. A token inserted by an exchange that read its key just
-- before such a delete names a key, user or team that no longer exists and
-- can never authenticate: every read of a token joins all three
-- (store.tokenByHash). SQLite's set keeps its foreign keys: there one writer
-- at a time checks them with three index reads and no lock of their own.
ALTER TABLE tokens DROP CONSTRAINT tokens_key_id_fkey;
ALTER TABLE tokens DROP CONSTRAINT tokens_user_id_fkey;
ALTER TABLE tokens DROP CONSTRAINT tokens_team_id_fkey;

-- +goose Down
DELETE FROM tokens t WHERE NOT EXISTS (SELECT 1 FROM service_keys k WHERE k.id = t.key_id)
    OR NOT EXISTS (SELECT 1 FROM users u WHERE u.id = t.user_id)
    OR NOT EXISTS (SELECT 1 FROM teams tm WHERE tm.id = t.team_id);
ALTER TABLE tokens ADD CONSTRAINT tokens_key_id_fkey FOREIGN KEY (key_id) REFERENCES service_keys (id);
ALTER TABLE tokens ADD CONSTRAINT tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id);
ALTER TABLE tokens ADD CONSTRAINT tokens_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id);
