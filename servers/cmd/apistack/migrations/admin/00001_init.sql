-- The admin schema of a PostgreSQL stack (--database): what `serve --demo`
-- creates once for every replica. SQLite stacks keep demo-credentials.json.

-- +goose Up
CREATE TABLE demo_credentials (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    -- the JSON of demo-credentials.json, sealed (secretbox) with the key
    -- derived from the master key for "admin"
    sealed     TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE demo_credentials;
