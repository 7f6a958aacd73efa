-- +goose Up
-- The exact body of each webhook POST, as signed (the sandbox webhook log
-- hands it out with the signed headers, so `apistack listen` can re-post a
-- delivery byte for byte). NULL for attempts recorded before this column.
ALTER TABLE delivery_attempts ADD COLUMN body {{bytes}} NULL;

-- +goose Down
ALTER TABLE delivery_attempts DROP COLUMN body;
