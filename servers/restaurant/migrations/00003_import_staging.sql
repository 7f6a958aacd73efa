-- +goose Up
-- The staging tables of a configuration import (importstore.go): while an
-- import writes its entities, the GUIDs it wrote (a second one is a
-- duplicate of the document) and the references its entities hold (checked
-- against entities by one join once all are written) live here, inside the
-- import's transaction, so that the import's memory does not grow with the
-- document. An import deletes its rows before it commits, and a rollback
-- leaves none: outside an import both tables are empty. On PostgreSQL they
-- are unlogged: nothing in them outlives its transaction.
CREATE {{if postgres}}UNLOGGED {{end}}TABLE import_guids (
    restaurant_guid TEXT NOT NULL,
    kind            TEXT NOT NULL,
    guid            TEXT NOT NULL,
    PRIMARY KEY (restaurant_guid, kind, guid)
);

CREATE {{if postgres}}UNLOGGED {{end}}TABLE import_refs (
    restaurant_guid TEXT NOT NULL,
    seq             BIGINT NOT NULL,
    kind            TEXT NOT NULL,
    guid            TEXT NOT NULL,
    pointer         TEXT NOT NULL,
    PRIMARY KEY (restaurant_guid, seq)
);

-- +goose Down
DROP TABLE import_refs;
DROP TABLE import_guids;
