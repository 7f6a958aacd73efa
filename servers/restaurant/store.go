package restaurant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// migrationFiles are the schema migrations of both dialects (API.Files,
// servers/internal/migrationset).
//
//go:embed migrations
var migrationFiles embed.FS

// store is every SQL statement of the restaurant service.
type store struct {
	db *sqldb.DB
	// pages caches list pages read, dropped after every committed write.
	pages *cache.Cache[cachedPage]
}

// cachedPage is a page read by page. Its rows are shared by every reader of
// the cache: never modify them.
type cachedPage struct {
	rows []entityRow
	more bool
}

// hashSecret is how client secrets and tokens are stored: both are 256-bit
// random values, so a plain SHA-256 is enough (no password stretching needed).
func hashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

func randomSecret() string {
	return rand.Text() + rand.Text()
}

type restaurantRecord struct {
	GUID      string
	Name      string
	CreatedAt time.Time
}

func (s *store) createRestaurant(ctx context.Context, guid, name string, now time.Time) (restaurantRecord, error) {
	if err := sqldb.ExecOne(ctx, s.db, storeerr.ErrAlreadyExists,
		`INSERT INTO restaurants (guid, name, created_at) VALUES (?, ?, ?) ON CONFLICT (guid) DO NOTHING`,
		guid, name, sqldb.Micros(now)); err != nil {
		return restaurantRecord{}, fmt.Errorf("create restaurant: %w", err)
	}
	return restaurantRecord{GUID: guid, Name: name, CreatedAt: sqldb.Time(sqldb.Micros(now))}, nil
}

func (s *store) restaurant(ctx context.Context, guid string) (restaurantRecord, error) {
	var r restaurantRecord
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT guid, name, created_at FROM restaurants WHERE guid = ?`, guid).
		Scan(&r.GUID, &r.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return restaurantRecord{}, storeerr.ErrNotFound
	}
	if err != nil {
		return restaurantRecord{}, fmt.Errorf("read restaurant: %w", err)
	}
	r.CreatedAt = sqldb.Time(created)
	return r, nil
}

type clientRecord struct {
	ID          string
	Name        string
	SecretHash  []byte
	Restaurants []string
}

// createClient stores an API client granted restaurants, in one transaction;
// storeerr.ErrNotFound when one of the restaurants does not exist.
func (s *store) createClient(ctx context.Context, id, name string, secretHash []byte, restaurants []string, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO api_clients (id, name, secret_hash, created_at) VALUES (?, ?, ?, ?)`,
		id, name, secretHash, sqldb.Micros(now)); err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	for _, r := range restaurants {
		var exists int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM restaurants WHERE guid = ?`, r).Scan(&exists)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("restaurant %s: %w", r, storeerr.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read restaurant: %w", err)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO client_grants (client_id, restaurant_guid) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, r); err != nil {
			return fmt.Errorf("grant restaurant: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (s *store) client(ctx context.Context, id string) (clientRecord, error) {
	var c clientRecord
	err := s.db.QueryRowContext(ctx, `SELECT id, name, secret_hash FROM api_clients WHERE id = ?`, id).
		Scan(&c.ID, &c.Name, &c.SecretHash)
	if errors.Is(err, sql.ErrNoRows) {
		return clientRecord{}, storeerr.ErrNotFound
	}
	if err != nil {
		return clientRecord{}, fmt.Errorf("read client: %w", err)
	}
	grants, err := apistore.Collect(ctx, s.db, apistore.Scan[string], `SELECT restaurant_guid FROM client_grants WHERE client_id = ? ORDER BY restaurant_guid`, id)
	if err != nil {
		return clientRecord{}, fmt.Errorf("read grants: %w", err)
	}
	c.Restaurants = append([]string{}, grants...)
	return c, nil
}

func (s *store) insertToken(ctx context.Context, hash []byte, clientID string, expires time.Time) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO tokens (hash, client_id, expires_at) VALUES (?, ?, ?)`, hash, clientID, sqldb.Micros(expires))
	if err != nil {
		return fmt.Errorf("store token: %w", err)
	}
	return nil
}

// tokenByHash returns the client of a token and when the token expires.
func (s *store) tokenByHash(ctx context.Context, hash []byte) (clientID, clientName string, expires time.Time, err error) {
	var us int64
	err = s.db.QueryRowContext(ctx, `SELECT t.client_id, c.name, t.expires_at FROM tokens t JOIN api_clients c ON c.id = t.client_id
		WHERE t.hash = ?`, hash).Scan(&clientID, &clientName, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", time.Time{}, storeerr.ErrNotFound
	}
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("read token: %w", err)
	}
	return clientID, clientName, sqldb.Time(us), nil
}

// access reports whether the restaurant exists and whether the client was
// granted it.
func (s *store) access(ctx context.Context, clientID, restaurantGUID string) (exists, granted bool, err error) {
	var g sql.NullString
	err = s.db.QueryRowContext(ctx, `
		SELECT g.client_id FROM restaurants r
		LEFT JOIN client_grants g ON g.restaurant_guid = r.guid AND g.client_id = ?
		WHERE r.guid = ?`, clientID, restaurantGUID).Scan(&g)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("read grant: %w", err)
	}
	return true, g.Valid, nil
}

// entityRow is one stored entity document with its position in its list.
type entityRow struct {
	Seq int64
	Doc []byte
}

// pageQuery selects one page of a list.
type pageQuery struct {
	Restaurant string
	Kind       string
	// AfterSeq is the keyset position: only rows inserted after it.
	AfterSeq int64
	// ModifiedAfterMs, when set, keeps rows created or modified after it: in
	// a later millisecond (lastModified's precision).
	ModifiedAfterMs *int64
	// Offset skips rows (the deprecated page parameter).
	Offset int
	Limit  int
}

// page returns up to q.Limit live entities in insertion order and whether
// more follow.
func (s *store) page(ctx context.Context, q pageQuery) ([]entityRow, bool, error) {
	key := fmt.Sprintf("%s|%s|%d|%d|%d", q.Restaurant, q.Kind, q.AfterSeq, q.Offset, q.Limit)
	if q.ModifiedAfterMs != nil {
		key += fmt.Sprintf("|%d", *q.ModifiedAfterMs)
	}
	if p, ok := s.pages.Get(key); ok {
		return p.rows, p.more, nil
	}
	gen := s.pages.Generation()
	var b strings.Builder
	args := []any{q.Restaurant, q.Kind, q.AfterSeq}
	b.WriteString(`SELECT seq, doc FROM entities
		WHERE restaurant_guid = ? AND kind = ? AND seq > ? AND archived = FALSE AND removed = FALSE`)
	if q.ModifiedAfterMs != nil {
		b.WriteString(` AND modified_at >= ?`)
		args = append(args, (*q.ModifiedAfterMs+1)*1000)
	}
	b.WriteString(` ORDER BY seq LIMIT ? OFFSET ?`)
	args = append(args, q.Limit+1, q.Offset)
	rows, err := s.db.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", q.Kind, err)
	}
	defer rows.Close()
	out := make([]entityRow, 0, q.Limit+1)
	for rows.Next() {
		var r entityRow
		if err := rows.Scan(&r.Seq, &r.Doc); err != nil {
			return nil, false, fmt.Errorf("list %s: %w", q.Kind, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("list %s: %w", q.Kind, err)
	}
	more := len(out) > q.Limit
	if more {
		out = out[:q.Limit]
	}
	s.pages.Put(gen, key, cachedPage{rows: out, more: more})
	return out, more, nil
}

// entity returns the document of one live entity.
func (s *store) entity(ctx context.Context, restaurantGUID, kind, guid string) ([]byte, error) {
	var doc []byte
	err := s.db.QueryRowContext(ctx, `
		SELECT doc FROM entities
		WHERE restaurant_guid = ? AND kind = ? AND guid = ? AND archived = FALSE AND removed = FALSE`,
		restaurantGUID, kind, strings.ToLower(guid)).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storeerr.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", kind, err)
	}
	return doc, nil
}

// singleton returns the live entity of a kind a restaurant has one of (tip
// withholding): the one created last.
func (s *store) singleton(ctx context.Context, restaurantGUID, kind string) ([]byte, error) {
	var doc []byte
	err := s.db.QueryRowContext(ctx, `
		SELECT doc FROM entities
		WHERE restaurant_guid = ? AND kind = ? AND archived = FALSE AND removed = FALSE
		ORDER BY seq DESC LIMIT 1`, restaurantGUID, kind).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storeerr.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", kind, err)
	}
	return doc, nil
}

// storedEntity is one entity of an import, ready to be written.
type storedEntity struct {
	Kind       string
	GUID       string
	ExternalID *string
	Doc        []byte
}

// entityKey names an entity within a restaurant.
type entityKey struct {
	Kind string
	GUID string
}

// importTx is an import's one transaction: entities are written to it in
// batches while the document is read, and nothing of them is seen by others
// until commit; rollback leaves the store as it was.
type importTx struct {
	tx             *sqldb.Tx
	ins            *sql.Stmt
	restaurantGUID string
	at             int64
	// found says whether the restaurant exists; when it does not, nothing
	// is written and the import ends with storeerr.ErrNotFound unless the
	// document has problems of its own.
	found bool
}

// beginImport opens the transaction of an import into restaurantGUID. Imports
// of one restaurant run one at a time (on every replica): each compares the
// document with what is stored before it writes.
func (s *store) beginImport(ctx context.Context, restaurantGUID string, now time.Time) (_ *importTx, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	t := &importTx{tx: tx, restaurantGUID: restaurantGUID, at: sqldb.Micros(now)}
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
	t.ins, err = tx.PrepareContext(ctx, `
		INSERT INTO entities (restaurant_guid, kind, guid, external_id, doc, created_at, modified_at, archived, removed)
		VALUES (?, ?, ?, ?, ?, ?, ?, FALSE, FALSE)
		ON CONFLICT (restaurant_guid, kind, guid) DO UPDATE SET
			external_id = excluded.external_id, doc = excluded.doc, modified_at = excluded.modified_at,
			archived = FALSE, removed = FALSE
		WHERE entities.doc <> excluded.doc OR entities.archived OR entities.removed`)
	if err != nil {
		return nil, fmt.Errorf("prepare insert: %w", err)
	}
	return t, nil
}

// write writes one batch of entities: an entity already stored is replaced
// (and made live again); its modified time only moves when its document
// changed.
func (t *importTx) write(ctx context.Context, entities []storedEntity) error {
	for _, e := range entities {
		if _, err := t.ins.ExecContext(ctx, t.restaurantGUID, e.Kind, e.GUID, e.ExternalID, e.Doc, t.at, t.at); err != nil {
			return fmt.Errorf("write %s %s: %w", e.Kind, e.GUID, err)
		}
	}
	return nil
}

// missing checks that every reference the document does not satisfy itself
// names a live entity stored before the import, and returns a problem for
// each place that holds one that does not.
func (t *importTx) missing(ctx context.Context, external map[entityKey][]string) ([]string, error) {
	if len(external) == 0 {
		return nil, nil
	}
	check, err := t.tx.PrepareContext(ctx, `
		SELECT 1 FROM entities
		WHERE restaurant_guid = ? AND kind = ? AND guid = ? AND archived = FALSE AND removed = FALSE`)
	if err != nil {
		return nil, fmt.Errorf("prepare reference check: %w", err)
	}
	defer check.Close()
	var problems []string
	var exists int
	for key, where := range external {
		err := check.QueryRowContext(ctx, t.restaurantGUID, key.Kind, key.GUID).Scan(&exists)
		if errors.Is(err, sql.ErrNoRows) {
			for _, w := range where {
				problems = append(problems, fmt.Sprintf("%s: %s %s is neither in the document nor stored", w, key.Kind, key.GUID))
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("check reference: %w", err)
		}
	}
	return problems, nil
}

// commit makes the import's writes visible.
func (t *importTx) commit() error {
	if t.ins != nil {
		_ = t.ins.Close()
	}
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// rollback drops the import's writes; after commit it does nothing.
func (t *importTx) rollback() {
	if t.ins != nil {
		_ = t.ins.Close()
	}
	_ = t.tx.Rollback()
}

// setHidden archives or removes one entity; storeerr.ErrNotFound when it is not stored.
func (s *store) setHidden(ctx context.Context, restaurantGUID, kind, guid string, removed bool, now time.Time) error {
	column := "archived"
	if removed {
		column = "removed"
	}
	res, err := s.db.ExecContext(ctx,
		`UPDATE entities SET `+column+` = TRUE, modified_at = ? WHERE restaurant_guid = ? AND kind = ? AND guid = ?`,
		sqldb.Micros(now), restaurantGUID, kind, strings.ToLower(guid))
	if err != nil {
		return fmt.Errorf("hide %s: %w", kind, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return storeerr.ErrNotFound
	}
	return nil
}

// counts returns the number of live entities per kind of a restaurant.
func (s *store) counts(ctx context.Context, restaurantGUID string) (map[string]int, error) {
	out, err := apistore.Counts(ctx, s.db, `
		SELECT kind, COUNT(*) FROM entities
		WHERE restaurant_guid = ? AND archived = FALSE AND removed = FALSE
		GROUP BY kind`, restaurantGUID)
	if err != nil {
		return nil, fmt.Errorf("count entities: %w", err)
	}
	return out, nil
}
