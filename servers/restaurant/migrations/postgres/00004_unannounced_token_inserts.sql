-- +goose Up
-- Every login inserts a token, and no replica's cache can be missing one
-- (only tokens found are cached; an unknown one is not), so the inserts are
-- not announced to the other replicas (pgdb.QuietInsertsComment: the next
-- open makes the notify trigger fire on UPDATE and DELETE only). An
-- announcing commit takes a lock that is one for the whole cluster and
-- wakes every replica; a deletion (a sandbox's reset) still does.
COMMENT ON TABLE tokens IS 'apistack: inserts unannounced: no cache holds a token''s absence';

-- +goose Down
COMMENT ON TABLE tokens IS NULL;
