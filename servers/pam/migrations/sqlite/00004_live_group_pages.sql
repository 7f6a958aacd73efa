-- +goose Up
-- A page of live groups is read from this index alone (a covering, partial
-- index): the rows' columns come with the keyset order, with no lookup of
-- each row in the table.
CREATE INDEX team_groups_live_page ON team_groups (team_id, name, id, roles, deleted_at) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX team_groups_live_page;
