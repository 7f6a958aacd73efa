package restaurant

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// entityKey names an entity within a restaurant.
type entityKey struct {
	Kind string
	GUID string
}

// size is about the bytes an entity read from the spool holds: its
// document, strings and references.
func (e *storedEntity) size() int {
	const header = 96 // the struct and its strings' and slices' headers
	n := header + len(e.Kind) + len(e.GUID) + len(e.At) + len(e.Doc)
	for _, r := range e.Refs {
		n += header/2 + len(r.Kind) + len(r.GUID) + len(r.At)
	}
	return n
}

// storedRef is a reference an entity holds: the entity it names and where.
type storedRef struct {
	Kind string
	GUID string
	At   string
}

// importTx is an import's one transaction: the entities of a document read
// and checked whole before (importSpool) are written to it batch by batch, and
// nothing of them is seen by others until commit; rollback leaves the store
// as it was. The GUIDs written and the references held are staged in the
// tables import_guids and import_refs of the same transaction, so that the
// duplicate check and the reference check cost the database's memory and
// not the import's.
type importTx struct {
	tx             *sqldb.Tx
	restaurantGUID string
	at             int64
	// refs counts the references staged: their order in the document.
	refs int64
	// postgres says whether the store is PostgreSQL's.
	postgres bool
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
	t := &importTx{tx: tx, restaurantGUID: restaurantGUID, at: sqldb.Micros(now), postgres: s.db.Dialect() == sqldb.Postgres}
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
	return t, nil
}

// importRowsPerStatement bounds the rows of one statement of an import's
// batch: its arguments stay far under either engine's limit.
const importRowsPerStatement = 1024

// statementSizes splits n rows into statements of powers of two rows, at
// most importRowsPerStatement each, so that the texts of an import's
// statements are few (and cached as prepared statements) whatever the
// sizes of its batches.
func statementSizes(n int) []int {
	var sizes []int
	for n > 0 {
		size := importRowsPerStatement
		for size > n {
			size /= 2
		}
		sizes = append(sizes, size)
		n -= size
	}
	return sizes
}

// rowsStatement is head followed by rows parenthesized groups of width
// placeholders, then tail.
func rowsStatement(head string, width, rows int, tail string) string {
	group := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	return head + strings.TrimSuffix(strings.Repeat(group+", ", rows), ", ") + tail
}

// write writes one batch of entities, read from the spool in the order of
// the document, with a few statements of many rows each. An entity already
// stored is replaced (and made live again); its modified time only moves
// when its document changed. The entities' GUIDs and references are staged;
// an entity whose GUID the document held before (in this batch or an
// earlier one: import_guids refuses it) is a duplicate, added to problems
// and not written.
func (t *importTx) write(ctx context.Context, batch []storedEntity, problems *problemList) error {
	// Duplicates within the batch are found here, those of earlier batches
	// by the staging table's key.
	fresh := make([]*storedEntity, 0, len(batch))
	inBatch := make(map[entityKey]bool, len(batch))
	dup := make(map[*storedEntity]bool)
	for i := range batch {
		e := &batch[i]
		k := entityKey{Kind: e.Kind, GUID: e.GUID}
		if inBatch[k] {
			dup[e] = true
			continue
		}
		inBatch[k] = true
		fresh = append(fresh, e)
	}
	staged := make(map[entityKey]bool, len(fresh))
	for rest := fresh; len(rest) > 0; {
		n := statementSizes(len(rest))[0]
		args := make([]any, 0, 3*n)
		for _, e := range rest[:n] {
			args = append(args, t.restaurantGUID, e.Kind, e.GUID)
		}
		if err := t.stageGUIDs(ctx, n, args, staged); err != nil {
			return err
		}
		rest = rest[n:]
	}
	written := fresh[:0]
	for _, e := range fresh {
		if staged[entityKey{Kind: e.Kind, GUID: e.GUID}] {
			written = append(written, e)
		} else {
			dup[e] = true
		}
	}
	for i := range batch {
		if e := &batch[i]; dup[e] {
			problems.add("%s/guid: %s appears twice in %s", e.At, e.GUID, e.Kind)
		}
	}
	for rest := written; len(rest) > 0; {
		n := statementSizes(len(rest))[0]
		args := make([]any, 0, 7*n)
		for _, e := range rest[:n] {
			args = append(args, t.restaurantGUID, e.Kind, e.GUID, e.ExternalID, e.Doc, t.at, t.at)
		}
		if _, err := t.tx.ExecContext(ctx, rowsStatement(`
			INSERT INTO entities (restaurant_guid, kind, guid, external_id, doc, created_at, modified_at) VALUES `, 7, n, `
			ON CONFLICT (restaurant_guid, kind, guid) DO UPDATE SET
				external_id = excluded.external_id, doc = excluded.doc, modified_at = excluded.modified_at,
				archived = FALSE, removed = FALSE
			WHERE entities.doc <> excluded.doc OR entities.archived OR entities.removed`), args...); err != nil {
			return fmt.Errorf("write %d entities: %w", n, err)
		}
		rest = rest[n:]
	}
	var refs []any
	flushRefs := func(n int) error {
		if _, err := t.tx.ExecContext(ctx, rowsStatement(`
			INSERT INTO import_refs (restaurant_guid, seq, kind, guid, pointer) VALUES `, 5, n, ``), refs[:5*n]...); err != nil {
			return fmt.Errorf("stage %d references: %w", n, err)
		}
		refs = append(refs[:0], refs[5*n:]...)
		return nil
	}
	for _, e := range written {
		for _, r := range e.Refs {
			t.refs++
			refs = append(refs, t.restaurantGUID, t.refs, r.Kind, r.GUID, r.At)
			if len(refs) == 5*importRowsPerStatement {
				if err := flushRefs(importRowsPerStatement); err != nil {
					return err
				}
			}
		}
	}
	for _, n := range statementSizes(len(refs) / 5) {
		if err := flushRefs(n); err != nil {
			return err
		}
	}
	return nil
}

// stageGUIDs stages n entities' GUIDs (args), adding to staged those the
// staging table did not hold yet.
func (t *importTx) stageGUIDs(ctx context.Context, n int, args []any, staged map[entityKey]bool) error {
	rows, err := t.tx.QueryContext(ctx, rowsStatement(`
		INSERT INTO import_guids (restaurant_guid, kind, guid) VALUES `, 3, n, `
		ON CONFLICT DO NOTHING RETURNING kind, guid`), args...)
	if err != nil {
		return fmt.Errorf("stage %d GUIDs: %w", n, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k entityKey
		if err := rows.Scan(&k.Kind, &k.GUID); err != nil {
			return fmt.Errorf("stage %d GUIDs: %w", n, err)
		}
		staged[k] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("stage %d GUIDs: %w", n, err)
	}
	return nil
}

// dangling checks, once every entity is written, that every reference
// staged names a live entity (written by the import or stored before it),
// adding a problem for each place that holds one that does not, in the
// order of the document.
func (t *importTx) dangling(ctx context.Context, problems *problemList) error {
	if t.postgres {
		// The planner knows nothing of the rows this transaction staged
		// and wrote (the restaurant's entities were few when last
		// analyzed): it would look each reference up among all the
		// restaurant's entities, a time that grows with the square of the
		// document. A hash anti-join reads each side once.
		if _, err := t.tx.ExecContext(ctx, `SET LOCAL enable_nestloop = off`); err != nil {
			return fmt.Errorf("check references: %w", err)
		}
		defer func() { _, _ = t.tx.ExecContext(ctx, `SET LOCAL enable_nestloop = DEFAULT`) }()
	}
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
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// rollback drops the import's writes, staging included; after commit it
// does nothing.
func (t *importTx) rollback() {
	_ = t.tx.Rollback()
}
