package restaurant

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/apistack/apistack/servers/internal/sqldb"
)

// storedEntity is one entity of an import, ready to be written, with the
// references it holds.
type storedEntity struct {
	Kind       string
	GUID       string
	ExternalID *string
	Doc        []byte
	// At is the entity's JSON pointer in the document.
	At string
	// Refs are the entities it refers to.
	Refs []storedRef
}

// storedRef is a reference an entity holds: the entity it names and where.
type storedRef struct {
	Kind string
	GUID string
	At   string
}

// importTx is an import's one transaction: the entities of a document read
// and checked whole before (importSpool) are written to it one by one, and
// nothing of them is seen by others until commit; rollback leaves the store
// as it was. The GUIDs written and the references held are staged in the
// tables import_guids and import_refs of the same transaction, so that the
// duplicate check and the reference check cost the database's memory and
// not the import's.
type importTx struct {
	tx                    *sqldb.Tx
	ins, stageGUID, stage *sql.Stmt
	restaurantGUID        string
	at                    int64
	// refs counts the references staged: their order in the document.
	refs int64
	// found says whether the restaurant exists; when it does not, nothing
	// is written and the import ends with storeerr.ErrNotFound.
	found bool
}

// beginImport opens the transaction of an import into restaurantGUID. Imports
// of one restaurant run one at a time (on every replica): each compares the
// document with what is stored before it writes, and stages its checks under
// the restaurant's GUID.
func (s *store) beginImport(ctx context.Context, restaurantGUID string, now time.Time) (_ *importTx, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	t := &importTx{tx: tx, restaurantGUID: restaurantGUID, at: sqldb.Micros(now)}
	defer func() {
		if err != nil {
			t.rollback()
		}
	}()
	var exists int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM restaurants WHERE guid = ?`, restaurantGUID).Scan(&exists)
	if errors.Is(err, sql.ErrNoRows) {
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read restaurant: %w", err)
	}
	t.found = true
	if _, err := tx.LockRows(ctx, `SELECT guid FROM restaurants WHERE guid = ?`, restaurantGUID); err != nil {
		return nil, err
	}
	if t.ins, err = tx.PrepareContext(ctx, `
		INSERT INTO entities (restaurant_guid, kind, guid, external_id, doc, created_at, modified_at, archived, removed)
		VALUES (?, ?, ?, ?, ?, ?, ?, FALSE, FALSE)
		ON CONFLICT (restaurant_guid, kind, guid) DO UPDATE SET
			external_id = excluded.external_id, doc = excluded.doc, modified_at = excluded.modified_at,
			archived = FALSE, removed = FALSE
		WHERE entities.doc <> excluded.doc OR entities.archived OR entities.removed`); err != nil {
		return nil, fmt.Errorf("prepare insert: %w", err)
	}
	if t.stageGUID, err = tx.PrepareContext(ctx, `
		INSERT INTO import_guids (restaurant_guid, kind, guid) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`); err != nil {
		return nil, fmt.Errorf("prepare GUID staging: %w", err)
	}
	if t.stage, err = tx.PrepareContext(ctx, `
		INSERT INTO import_refs (restaurant_guid, seq, kind, guid, pointer) VALUES (?, ?, ?, ?, ?)`); err != nil {
		return nil, fmt.Errorf("prepare reference staging: %w", err)
	}
	return t, nil
}

// write writes one entity: an entity already stored is replaced (and made
// live again); its modified time only moves when its document changed. It
// stages the entity's GUID and references, and returns false when the
// document held the entity's GUID before (a duplicate: nothing is written).
func (t *importTx) write(ctx context.Context, e *storedEntity) (bool, error) {
	res, err := t.stageGUID.ExecContext(ctx, t.restaurantGUID, e.Kind, e.GUID)
	if err != nil {
		return false, fmt.Errorf("stage %s %s: %w", e.Kind, e.GUID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if _, err := t.ins.ExecContext(ctx, t.restaurantGUID, e.Kind, e.GUID, e.ExternalID, e.Doc, t.at, t.at); err != nil {
		return false, fmt.Errorf("write %s %s: %w", e.Kind, e.GUID, err)
	}
	for _, r := range e.Refs {
		t.refs++
		if _, err := t.stage.ExecContext(ctx, t.restaurantGUID, t.refs, r.Kind, r.GUID, r.At); err != nil {
			return false, fmt.Errorf("stage reference %s: %w", r.At, err)
		}
	}
	return true, nil
}

// dangling checks, once every entity is written, that every reference
// staged names a live entity (written by the import or stored before it),
// adding a problem for each place that holds one that does not, in the
// order of the document.
func (t *importTx) dangling(ctx context.Context, problems *problemList) error {
	rows, err := t.tx.QueryContext(ctx, `
		SELECT r.pointer, r.kind, r.guid FROM import_refs r
		WHERE r.restaurant_guid = ? AND NOT EXISTS (
			SELECT 1 FROM entities e
			WHERE e.restaurant_guid = r.restaurant_guid AND e.kind = r.kind AND e.guid = r.guid
				AND e.archived = FALSE AND e.removed = FALSE)
		ORDER BY r.seq`, t.restaurantGUID)
	if err != nil {
		return fmt.Errorf("check references: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var at, kind, guid string
		if err := rows.Scan(&at, &kind, &guid); err != nil {
			return fmt.Errorf("check references: %w", err)
		}
		problems.add("%s: %s %s is neither in the document nor stored", at, kind, guid)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check references: %w", err)
	}
	return nil
}

// commit empties the staging tables and makes the import's writes visible.
func (t *importTx) commit(ctx context.Context) error {
	for _, table := range []string{"import_guids", "import_refs"} {
		if _, err := t.tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE restaurant_guid = ?`, t.restaurantGUID); err != nil {
			return fmt.Errorf("empty %s: %w", table, err)
		}
	}
	t.close()
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// close closes the transaction's prepared statements.
func (t *importTx) close() {
	for _, st := range []*sql.Stmt{t.ins, t.stageGUID, t.stage} {
		if st != nil {
			_ = st.Close()
		}
	}
	t.ins, t.stageGUID, t.stage = nil, nil, nil
}

// rollback drops the import's writes, staging included; after commit it
// does nothing.
func (t *importTx) rollback() {
	t.close()
	_ = t.tx.Rollback()
}
