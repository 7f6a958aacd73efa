-- +goose Up
-- Disabling a user revokes its tokens for good: enabling it again does not
-- bring them back, its keys must issue new ones.
ALTER TABLE tokens ADD COLUMN revoked_at BIGINT NULL;
CREATE INDEX tokens_by_user ON tokens (user_id);

-- +goose Down
DROP INDEX tokens_by_user;
ALTER TABLE tokens DROP COLUMN revoked_at;
