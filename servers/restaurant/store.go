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
	// entities caches the documents of single live entities read (entity),
	// dropped as pages are; nil caches nothing.
	entities *cache.Cache[[]byte]
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

// insertToken stores a token of clientID. No cache holds a token's
// absence, so the insert keeps the pages and documents cached
// (QuietExecContext): a token request drops none.
func (s *store) insertToken(ctx context.Context, hash []byte, clientID string, expires time.Time) error {
	_, err := s.db.QuietExecContext(ctx,
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

// entity returns the document of one live entity, from the cache when it
// was read since the last committed write. The document is shared by every
// reader of the cache: never modify it. An entity not found is not cached:
// it is looked for again, so one created since is found at once.
func (s *store) entity(ctx context.Context, restaurantGUID, kind, guid string) ([]byte, error) {
	if s.entities == nil {
		return s.readEntity(ctx, restaurantGUID, kind, guid)
	}
	key := restaurantGUID + "|" + kind + "|" + strings.ToLower(guid)
	if doc, ok := s.entities.Get(key); ok {
		return doc, nil
	}
	gen := s.entities.Generation()
	doc, err := s.readEntity(ctx, restaurantGUID, kind, guid)
	if err != nil {
		return nil, err
	}
	s.entities.Put(gen, key, doc)
	return doc, nil
}

// readEntity reads the document of one live entity from the database.
func (s *store) readEntity(ctx context.Context, restaurantGUID, kind, guid string) ([]byte, error) {
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
