-- +goose Up
-- No replica caches what the outbox and the delivery attempts hold (the
-- caches are of API keys, applications and fax list pages), and each
-- webhook delivery writes them several times (its claim, its attempts, its
-- outcome): their commits notify no replica (pgdb.QuietComment; the next
-- open takes the notify trigger off).
COMMENT ON TABLE outbox IS 'apistack: quiet: webhook events; no replica caches them';
COMMENT ON TABLE delivery_attempts IS 'apistack: quiet: webhook attempts; no replica caches them';

-- +goose Down
COMMENT ON TABLE outbox IS NULL;
COMMENT ON TABLE delivery_attempts IS NULL;
