package pam

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

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

// store is every SQL statement of the PAM service.
type store struct {
	db *sqldb.DB
	// pages caches list pages read, dropped after every committed write.
	pages *cache.Cache[any]
	// creates commits concurrent group creates together (PostgreSQL).
	creates batcher[*pendingCreate]
	// tokens commits concurrent token inserts together (PostgreSQL).
	tokens batcher[*pendingToken]
	// revoked is called after every committed change that can take access
	// away or change what a token may do (keys, users, teams, group roles and
	// members): the server drops what it cached about credentials.
	revoked func()
}

// changed reports a committed change that may revoke access.
func (s *store) changed() {
	if s.revoked != nil {
		s.revoked()
	}
}

// change runs a statement that is to change a row (sqldb.ExecOne: none
// when it changed nothing), wrapping its errors with what, and reports the
// change (changed).
func (s *store) change(ctx context.Context, what string, none error, query string, args ...any) error {
	if err := sqldb.ExecOne(ctx, s.db, none, query, args...); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	s.changed()
	return nil
}

type team struct {
	ID        string
	Name      string
	Disabled  bool
	CreatedAt time.Time
}

type group struct {
	ID        string
	Name      string
	Roles     []string
	DeletedAt *time.Time
}

// keyRecord is a service-user key with what decides whether it may issue a token.
type keyRecord struct {
	ID         string
	UserID     string
	TeamID     string
	SecretHash []byte
	ExpiresAt  *time.Time
	Deleted    bool
	UserStatus string
}

// tokenRecord is a bearer token with everything that decides whether it still works.
type tokenRecord struct {
	UserID       string
	UserName     string
	UserKind     string
	UserStatus   string
	TeamID       string
	TeamName     string
	TeamDisabled bool
	KeyID        string
	KeyDeleted   bool
	Revoked      bool
	ExpiresAt    time.Time
}

// hashSecret is how key secrets and tokens are stored: both are 256-bit random
// values, so a plain SHA-256 is enough (no password stretching needed).
func hashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// storedTime is t as every schema keeps it (sqldb.Micros): in UTC, to the
// microsecond, so an answer shows the instant a later read of the same row
// returns.
func storedTime(t time.Time) time.Time {
	return sqldb.Time(sqldb.Micros(t))
}

func joinRoles(roles []string) string {
	r := slices.Clone(roles)
	slices.Sort(r)
	return strings.Join(slices.Compact(r), ",")
}

func splitRoles(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

func (s *store) createTeam(ctx context.Context, name string, now time.Time) (team, error) {
	t := team{ID: uuid.NewString(), Name: name, CreatedAt: storedTime(now)}
	if err := sqldb.ExecOne(ctx, s.db, storeerr.ErrAlreadyExists,
		`INSERT INTO teams (id, name, disabled, created_at) VALUES (?, ?, FALSE, ?) ON CONFLICT (name) DO NOTHING`,
		t.ID, t.Name, sqldb.Micros(t.CreatedAt)); err != nil {
		return team{}, fmt.Errorf("create team: %w", err)
	}
	return t, nil
}

func (s *store) teamByName(ctx context.Context, name string) (team, error) {
	var t team
	err := s.db.QueryRowContext(ctx,
		`SELECT id, name, disabled, created_at FROM teams WHERE name = ?`, name).
		Scan(&t.ID, &t.Name, &t.Disabled, sqldb.TimeInto(&t.CreatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return team{}, storeerr.ErrNotFound
	}
	if err != nil {
		return team{}, fmt.Errorf("read team: %w", err)
	}
	return t, nil
}

func (s *store) setTeamDisabled(ctx context.Context, name string, disabled bool) (team, error) {
	if err := s.change(ctx, "update team", storeerr.ErrNotFound, `UPDATE teams SET disabled = ? WHERE name = ?`, disabled, name); err != nil {
		return team{}, err
	}
	return s.teamByName(ctx, name)
}

// bootstrapServiceUser creates a service user in a group (created or updated
// with roles) and issues one key, in one transaction.
func (s *store) bootstrapServiceUser(ctx context.Context, teamName, userName, groupName string, roles []string, keyTTL time.Duration, now time.Time) (ServiceUserCredentials, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return ServiceUserCredentials{}, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()

	var teamID string
	err = tx.QueryRowContext(ctx, `SELECT id FROM teams WHERE name = ?`, teamName).Scan(&teamID)
	if errors.Is(err, sql.ErrNoRows) {
		return ServiceUserCredentials{}, fmt.Errorf("team %q: %w", teamName, storeerr.ErrNotFound)
	}
	if err != nil {
		return ServiceUserCredentials{}, fmt.Errorf("read team: %w", err)
	}
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return ServiceUserCredentials{}, err
	}
	now = storedTime(now)
	userID := uuid.NewString()
	if err := sqldb.ExecOne(ctx, tx, fmt.Errorf("user %q: %w", userName, storeerr.ErrAlreadyExists),
		`INSERT INTO users (id, team_id, name, kind, status, created_at) VALUES (?, ?, ?, 'service', 'active', ?)
		 ON CONFLICT (team_id, name) DO NOTHING`, userID, teamID, userName, sqldb.Micros(now)); err != nil {
		return ServiceUserCredentials{}, fmt.Errorf("create user: %w", err)
	}

	var groupID string
	err = tx.QueryRowContext(ctx, `SELECT id FROM team_groups WHERE team_id = ? AND name = ? AND deleted_at IS NULL`, teamID, groupName).Scan(&groupID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		groupID = uuid.NewString()
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO team_groups (id, team_id, name, roles, created_at) VALUES (?, ?, ?, ?, ?)`,
			groupID, teamID, groupName, joinRoles(roles), sqldb.Micros(now)); err != nil {
			return ServiceUserCredentials{}, fmt.Errorf("create group: %w", err)
		}
	case err != nil:
		return ServiceUserCredentials{}, fmt.Errorf("read group: %w", err)
	default:
		if _, err := tx.ExecContext(ctx, `UPDATE team_groups SET roles = ? WHERE id = ?`, joinRoles(roles), groupID); err != nil {
			return ServiceUserCredentials{}, fmt.Errorf("update group roles: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO group_members (group_id, user_id) VALUES (?, ?)`, groupID, userID); err != nil {
		return ServiceUserCredentials{}, fmt.Errorf("add member: %w", err)
	}

	keyID, secret := uuid.NewString(), randomSecret()
	var expires *time.Time
	if keyTTL > 0 {
		e := now.Add(keyTTL)
		expires = &e
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO service_keys (id, user_id, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		keyID, userID, hashSecret(secret), sqldb.Micros(now), sqldb.NullMicros(expires)); err != nil {
		return ServiceUserCredentials{}, fmt.Errorf("create key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return ServiceUserCredentials{}, fmt.Errorf("commit: %w", err)
	}
	s.changed() // an existing group's roles may have changed
	return ServiceUserCredentials{
		TeamName: teamName, UserID: userID, UserName: userName, Group: groupName,
		Roles: splitRoles(joinRoles(roles)), KeyID: keyID, KeySecret: secret, KeyExpiresAt: expires,
	}, nil
}

func (s *store) keyByID(ctx context.Context, keyID string) (keyRecord, error) {
	var k keyRecord
	var deletedAt *time.Time
	err := s.db.QueryRowContext(ctx, `
		SELECT k.id, k.user_id, u.team_id, k.secret_hash, k.expires_at, k.deleted_at, u.status
		FROM service_keys k JOIN users u ON u.id = k.user_id
		WHERE k.id = ?`, keyID).
		Scan(&k.ID, &k.UserID, &k.TeamID, &k.SecretHash, sqldb.NullTimeInto(&k.ExpiresAt), sqldb.NullTimeInto(&deletedAt), &k.UserStatus)
	if errors.Is(err, sql.ErrNoRows) {
		return keyRecord{}, storeerr.ErrNotFound
	}
	if err != nil {
		return keyRecord{}, fmt.Errorf("read key: %w", err)
	}
	k.Deleted = deletedAt != nil
	return k, nil
}

// insertToken stores a token of key k, with its group commit on PostgreSQL
// (tokens.go). No cache holds a token's absence, so the insert keeps the
// list pages cached (QuietExecContext): an exchange drops none.
func (s *store) insertToken(ctx context.Context, hash []byte, k keyRecord, now, expires time.Time) error {
	if s.db.Dialect() == sqldb.Postgres {
		return s.tokens.of(s.db, commitTokens).Do(ctx, &pendingToken{hash: hash, key: k, now: now, expires: expires})
	}
	_, err := s.db.QuietExecContext(ctx,
		`INSERT INTO tokens (hash, key_id, user_id, team_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		hash, k.ID, k.UserID, k.TeamID, sqldb.Micros(now), sqldb.Micros(expires))
	if err != nil {
		return fmt.Errorf("store token: %w", err)
	}
	return nil
}

// tokenByHash returns the record of the token whose hash is hash. The same
// statement reads the maintenance switch (offline; nil when the
// token is not found): on a shared database a request whose token is not
// cached needs both, and reads them in one round trip.
func (s *store) tokenByHash(ctx context.Context, hash []byte) (tokenRecord, *bool, error) {
	var t tokenRecord
	var keyDeletedAt, revokedAt *time.Time
	var maintenance []byte
	err := s.db.QueryRowContext(ctx, `
		SELECT u.id, u.name, u.kind, u.status, tm.id, tm.name, tm.disabled, k.id, k.deleted_at, t.revoked_at, t.expires_at,
			(SELECT value FROM settings WHERE name = 'maintenance')
		FROM tokens t
		JOIN service_keys k ON k.id = t.key_id
		JOIN users u ON u.id = t.user_id
		JOIN teams tm ON tm.id = t.team_id
		WHERE t.hash = ?`, hash).
		Scan(&t.UserID, &t.UserName, &t.UserKind, &t.UserStatus, &t.TeamID, &t.TeamName, &t.TeamDisabled, &t.KeyID, sqldb.NullTimeInto(&keyDeletedAt), sqldb.NullTimeInto(&revokedAt), sqldb.TimeInto(&t.ExpiresAt),
			&maintenance)
	if errors.Is(err, sql.ErrNoRows) {
		return tokenRecord{}, nil, storeerr.ErrNotFound
	}
	if err != nil {
		return tokenRecord{}, nil, fmt.Errorf("read token: %w", err)
	}
	t.KeyDeleted = keyDeletedAt != nil
	t.Revoked = revokedAt != nil
	offline := string(maintenance) == "on"
	return t, &offline, nil
}

// rolesOf returns the union of the roles of the live groups userID is in.
func (s *store) rolesOf(ctx context.Context, userID string) ([]string, error) {
	groups, err := apistore.Collect(ctx, s.db, apistore.Scan[string], `
		SELECT g.roles FROM team_groups g JOIN group_members m ON m.group_id = g.id
		WHERE m.user_id = ? AND g.deleted_at IS NULL`, userID)
	if err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	var roles []string
	for _, r := range groups {
		roles = append(roles, splitRoles(r)...)
	}
	slices.Sort(roles)
	return slices.Compact(roles), nil
}

// groupFilter narrows a group listing.
type groupFilter struct {
	IncludeDeleted bool
	Contains       string
}

// keyset is a position in a list ordered by (name, id).
type keyset struct {
	Name string `json:"n"`
	ID   string `json:"i"`
}

// pageQuery is a list query in (name, id) order: the generic keyset
// pagination of every list.
type pageQuery struct {
	// sel is the SELECT ... FROM ... part; where and args narrow it.
	sel   string
	where []string
	args  []any
	// nameCol and idCol are the order's columns.
	nameCol, idCol string
}

func (q *pageQuery) and(cond string, args ...any) {
	q.where = append(q.where, cond)
	q.args = append(q.args, args...)
}

// queryPage returns up to limit rows after (or, backwards, before) pos, in
// (name, id) order, and whether more exist beyond them in that direction.
func queryPage[T any](ctx context.Context, s *store, q pageQuery, pos *keyset, backwards bool, limit int, scan func(*sql.Rows) (T, error)) ([]T, bool, error) {
	order := q.nameCol + ` ASC, ` + q.idCol + ` ASC`
	if pos != nil {
		op := ">"
		if backwards {
			op = "<"
		}
		// A row-value comparison, so the (name, id) index serves it as a range.
		q.and(`(`+q.nameCol+`, `+q.idCol+`) `+op+` (?, ?)`, pos.Name, pos.ID)
	}
	if backwards {
		order = q.nameCol + ` DESC, ` + q.idCol + ` DESC`
	}
	query := q.sel
	if len(q.where) > 0 {
		query += ` WHERE ` + strings.Join(q.where, ` AND `)
	}
	query += ` ORDER BY ` + order + ` LIMIT ?`
	args := append(q.args, limit+1)
	key := query + "\x00" + fmt.Sprintf("%#v", args)
	if v, ok := s.pages.Get(key); ok {
		p := v.(cachedPage[T])
		return p.items, p.more, nil
	}
	gen := s.pages.Generation()
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, false, fmt.Errorf("list: %w", err)
	}
	defer rows.Close()
	items := make([]T, 0, min(limit+1, 1024))
	for rows.Next() {
		it, err := scan(rows)
		if err != nil {
			return nil, false, fmt.Errorf("list: %w", err)
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("list: %w", err)
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	if backwards {
		slices.Reverse(items)
	}
	s.pages.Put(gen, key, cachedPage[T]{items: items, more: more})
	return items, more, nil
}

// cachedPage is a page read by queryPage. Its items are shared by every
// reader of the cache: never modify them.
type cachedPage[T any] struct {
	items []T
	more  bool
}

func scanGroup(rows *sql.Rows) (group, error) {
	var g group
	var roles string
	err := rows.Scan(&g.ID, &g.Name, &roles, sqldb.NullTimeInto(&g.DeletedAt))
	g.Roles = splitRoles(roles)
	return g, err
}

// listGroups pages through a team's groups.
func (s *store) listGroups(ctx context.Context, teamID string, f groupFilter, pos *keyset, backwards bool, limit int) ([]group, bool, error) {
	q := pageQuery{sel: `SELECT id, name, roles, deleted_at FROM team_groups`, nameCol: "name", idCol: "id"}
	q.and(`team_id = ?`, teamID)
	if !f.IncludeDeleted {
		q.and(`deleted_at IS NULL`)
	}
	if f.Contains != "" {
		q.and(`LOWER(name) LIKE ? ESCAPE '\'`, "%"+escapeLike(strings.ToLower(f.Contains))+"%")
	}
	return queryPage(ctx, s, q, pos, backwards, limit, scanGroup)
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func randomSecret() string {
	return rand.Text() + rand.Text()
}

// createKey issues a new key for the named user of the named team.
func (s *store) createKey(ctx context.Context, teamName, userName string, keyTTL time.Duration, now time.Time) (keyID, secret string, expires *time.Time, err error) {
	var userID string
	err = s.db.QueryRowContext(ctx, `
		SELECT u.id FROM users u JOIN teams t ON t.id = u.team_id
		WHERE t.name = ? AND u.name = ? AND u.kind = 'service' AND u.status <> 'deleted'`, teamName, userName).Scan(&userID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil, fmt.Errorf("service user %q of team %q: %w", userName, teamName, storeerr.ErrNotFound)
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("read user: %w", err)
	}
	now = storedTime(now)
	keyID, secret = uuid.NewString(), randomSecret()
	if keyTTL > 0 {
		e := now.Add(keyTTL)
		expires = &e
	}
	if _, err := s.db.ExecContext(ctx,
		`INSERT INTO service_keys (id, user_id, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		keyID, userID, hashSecret(secret), sqldb.Micros(now), sqldb.NullMicros(expires)); err != nil {
		return "", "", nil, fmt.Errorf("create key: %w", err)
	}
	return keyID, secret, expires, nil
}

// The resources a team quota can limit.
const (
	quotaGroups             = "groups"
	quotaServiceUsers       = "service_users"
	quotaKeysPerServiceUser = "keys_per_service_user"
)

// quotaError says a create would take a team past one of its quotas.
type quotaError struct {
	Resource string
	Limit    int
}

func (e *quotaError) Error() string {
	return fmt.Sprintf("quota of %d %s exceeded", e.Limit, strings.ReplaceAll(e.Resource, "_", " "))
}

// checkQuota fails with a *quotaError when the team's quota on resource
// leaves no room for one more, counting with countSQL (one ? per countArgs).
// It runs inside the create's write transaction, so two creates cannot both
// take the last place.
func checkQuota(ctx context.Context, tx *sqldb.Tx, teamID, resource, countSQL string, countArgs ...any) error {
	var limit int
	err := tx.QueryRowContext(ctx, `SELECT max_count FROM team_quotas WHERE team_id = ? AND resource = ?`, teamID, resource).Scan(&limit)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read quota: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, countSQL, countArgs...).Scan(&n); err != nil {
		return fmt.Errorf("count %s: %w", resource, err)
	}
	if n >= limit {
		return &quotaError{Resource: resource, Limit: limit}
	}
	return nil
}

// inTx runs fn in a write transaction (run again when PostgreSQL refused
// it for a conflict: sqldb.DB.InTx).
func (s *store) inTx(ctx context.Context, fn func(tx *sqldb.Tx) error) error {
	return s.db.InTx(ctx, fn)
}

// lockTeam locks the team's row until tx ends: the transactions that check
// one team's names or quotas before writing run one at a time on every
// replica, while other teams' run beside them.
func lockTeam(ctx context.Context, tx *sqldb.Tx, teamID string) error {
	_, err := tx.LockRows(ctx, `SELECT id FROM teams WHERE id = ?`, teamID)
	return err
}

// setQuotas sets (limit non-nil) or removes each of a team's quotas by
// resource, in one transaction: a refused value changes none of them.
func (s *store) setQuotas(ctx context.Context, teamID string, limits map[string]*int) error {
	return s.inTx(ctx, func(tx *sqldb.Tx) error {
		for resource, limit := range limits {
			var err error
			if limit == nil {
				_, err = tx.ExecContext(ctx, `DELETE FROM team_quotas WHERE team_id = ? AND resource = ?`, teamID, resource)
			} else {
				_, err = tx.ExecContext(ctx, `INSERT INTO team_quotas (team_id, resource, max_count) VALUES (?, ?, ?)
					ON CONFLICT (team_id, resource) DO UPDATE SET max_count = excluded.max_count`, teamID, resource, *limit)
			}
			if err != nil {
				return fmt.Errorf("set quota: %w", err)
			}
		}
		return nil
	})
}

// quotas returns a team's quotas by resource.
func (s *store) quotas(ctx context.Context, teamID string) (map[string]int, error) {
	out, err := apistore.Counts(ctx, s.db, `SELECT resource, max_count FROM team_quotas WHERE team_id = ?`, teamID)
	if err != nil {
		return nil, fmt.Errorf("read quotas: %w", err)
	}
	return out, nil
}

// createGroup creates a live group; storeerr.ErrAlreadyExists when a live group has
// the name, a *quotaError when the team's group quota is used up.
func (s *store) createGroup(ctx context.Context, teamID, name string, roles []string, now time.Time) (group, error) {
	g := group{ID: uuid.NewString(), Name: name, Roles: splitRoles(joinRoles(roles))}
	if s.db.Dialect() == sqldb.Postgres {
		if err := s.creates.of(s.db, commitCreates).Do(ctx, &pendingCreate{g: g, teamID: teamID, now: now}); err != nil {
			return group{}, err
		}
		return g, nil
	}
	err := s.inTx(ctx, func(tx *sqldb.Tx) error {
		if err := lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		// The checks and the insert are one statement (a round trip each on
		// PostgreSQL): the row is inserted only when the name is free and
		// the quota, if any, has room; only a refused insert asks which.
		res, err := tx.ExecContext(ctx, `INSERT INTO team_groups (id, team_id, name, roles, created_at)
			SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT)
			WHERE NOT EXISTS (SELECT 1 FROM team_groups WHERE team_id = ? AND name = ? AND deleted_at IS NULL)
			AND NOT EXISTS (SELECT 1 FROM team_quotas q WHERE q.team_id = ? AND q.resource = ?
				AND (SELECT COUNT(*) FROM team_groups WHERE team_id = ? AND deleted_at IS NULL) >= q.max_count)`,
			g.ID, teamID, name, joinRoles(roles), sqldb.Micros(now), teamID, name, teamID, quotaGroups, teamID)
		if err != nil {
			return fmt.Errorf("create group: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM team_groups WHERE team_id = ? AND name = ? AND deleted_at IS NULL`, teamID, name).Scan(&n); err != nil {
			return fmt.Errorf("create group: %w", err)
		}
		if n > 0 {
			return storeerr.ErrAlreadyExists
		}
		if err := checkQuota(ctx, tx, teamID, quotaGroups, `SELECT COUNT(*) FROM team_groups WHERE team_id = ? AND deleted_at IS NULL`, teamID); err != nil {
			return err
		}
		return errors.New("create group: the insert was refused with the name free and room in the quota")
	})
	if err != nil {
		return group{}, err
	}
	return g, nil
}

// groupByName returns the team's live group of that name or, when there is
// none, the one of that name deleted last.
func (s *store) groupByName(ctx context.Context, teamID, name string) (group, error) {
	var g group
	var roles string
	err := s.db.QueryRowContext(ctx, `
		SELECT id, name, roles, deleted_at FROM team_groups WHERE team_id = ? AND name = ?
		ORDER BY CASE WHEN deleted_at IS NULL THEN 0 ELSE 1 END, deleted_at DESC LIMIT 1`, teamID, name).
		Scan(&g.ID, &g.Name, &roles, sqldb.NullTimeInto(&g.DeletedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return group{}, storeerr.ErrNotFound
	}
	if err != nil {
		return group{}, fmt.Errorf("read group: %w", err)
	}
	g.Roles = splitRoles(roles)
	return g, nil
}

// liveGroup returns the team's live group of that name.
func (s *store) liveGroup(ctx context.Context, teamID, name string) (group, error) {
	g, err := s.groupByName(ctx, teamID, name)
	if err == nil && g.DeletedAt != nil {
		return group{}, storeerr.ErrNotFound
	}
	return g, err
}

// updateGroupRoles replaces a live group's roles.
func (s *store) updateGroupRoles(ctx context.Context, teamID, name string, roles []string) error {
	return s.change(ctx, "update group", storeerr.ErrNotFound, `UPDATE team_groups SET roles = ? WHERE team_id = ? AND name = ? AND deleted_at IS NULL`,
		joinRoles(roles), teamID, name)
}

// deleteGroup soft-deletes a live group.
func (s *store) deleteGroup(ctx context.Context, teamID, name string, now time.Time) error {
	return s.change(ctx, "delete group", storeerr.ErrNotFound, `UPDATE team_groups SET deleted_at = ? WHERE team_id = ? AND name = ? AND deleted_at IS NULL`,
		sqldb.Micros(now), teamID, name)
}

// user is a human or service user of a team.
type user struct {
	ID        string
	Name      string
	Kind      string
	Status    string
	CreatedAt time.Time
}

const userColumns = `u.id, u.name, u.kind, u.status, u.created_at`

func scanUser(rows *sql.Rows) (user, error) {
	var u user
	err := rows.Scan(&u.ID, &u.Name, &u.Kind, &u.Status, sqldb.TimeInto(&u.CreatedAt))
	return u, err
}

// userFilter narrows a user listing; empty fields do not filter.
type userFilter struct {
	Contains string
	Kind     string
	Status   string
}

// listUsers pages through a team's users.
func (s *store) listUsers(ctx context.Context, teamID string, f userFilter, pos *keyset, backwards bool, limit int) ([]user, bool, error) {
	q := pageQuery{sel: `SELECT ` + userColumns + ` FROM users u`, nameCol: "u.name", idCol: "u.id"}
	q.and(`u.team_id = ?`, teamID)
	q.and(`u.status <> 'deleted'`)
	if f.Contains != "" {
		q.and(`LOWER(u.name) LIKE ? ESCAPE '\'`, "%"+escapeLike(strings.ToLower(f.Contains))+"%")
	}
	if f.Kind != "" {
		q.and(`u.kind = ?`, f.Kind)
	}
	if f.Status != "" {
		q.and(`u.status = ?`, f.Status)
	}
	return queryPage(ctx, s, q, pos, backwards, limit, scanUser)
}

// listMembers pages through the users of a group.
func (s *store) listMembers(ctx context.Context, groupID string, pos *keyset, backwards bool, limit int) ([]user, bool, error) {
	q := pageQuery{sel: `SELECT ` + userColumns + ` FROM group_members m JOIN users u ON u.id = m.user_id`, nameCol: "u.name", idCol: "u.id"}
	q.and(`m.group_id = ?`, groupID)
	q.and(`u.status <> 'deleted'`)
	return queryPage(ctx, s, q, pos, backwards, limit, scanUser)
}

// userByName returns a user of the team; kind "" matches either kind.
func (s *store) userByName(ctx context.Context, teamID, name, kind string) (user, error) {
	return s.oneUser(ctx, `u.team_id = ? AND u.name = ? AND u.status <> 'deleted' AND (? = '' OR u.kind = ?)`, teamID, name, kind, kind)
}

// userByID returns a user by id.
func (s *store) userByID(ctx context.Context, id string) (user, error) {
	return s.oneUser(ctx, `u.id = ?`, id)
}

// oneUser returns the user of users u that where selects; storeerr.ErrNotFound when
// there is none.
func (s *store) oneUser(ctx context.Context, where string, args ...any) (user, error) {
	var u user
	err := s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE `+where, args...).
		Scan(&u.ID, &u.Name, &u.Kind, &u.Status, sqldb.TimeInto(&u.CreatedAt))
	if errors.Is(err, sql.ErrNoRows) {
		return user{}, storeerr.ErrNotFound
	}
	if err != nil {
		return user{}, fmt.Errorf("read user: %w", err)
	}
	return u, nil
}

// createUser creates an active user; service users count against the team's
// service-user quota.
func (s *store) createUser(ctx context.Context, teamID, name, kind string, now time.Time) (user, error) {
	u := user{ID: uuid.NewString(), Name: name, Kind: kind, Status: "active", CreatedAt: storedTime(now)}
	err := s.inTx(ctx, func(tx *sqldb.Tx) error {
		if err := lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE team_id = ? AND name = ?`, teamID, name).Scan(&n); err != nil {
			return fmt.Errorf("create user: %w", err)
		}
		if n > 0 {
			return storeerr.ErrAlreadyExists
		}
		if kind == "service" {
			if err := checkQuota(ctx, tx, teamID, quotaServiceUsers,
				`SELECT COUNT(*) FROM users WHERE team_id = ? AND kind = 'service' AND status <> 'deleted'`, teamID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO users (id, team_id, name, kind, status, created_at) VALUES (?, ?, ?, ?, 'active', ?)`,
			u.ID, teamID, name, kind, sqldb.Micros(u.CreatedAt)); err != nil {
			return fmt.Errorf("create user: %w", err)
		}
		return nil
	})
	if err != nil {
		return user{}, err
	}
	return u, nil
}

// updateServiceUser renames a service user and/or sets its status;
// storeerr.ErrAlreadyExists when the new name is taken.
func (s *store) updateServiceUser(ctx context.Context, teamID, userID string, newName, status *string, now time.Time) error {
	defer s.changed()
	return s.inTx(ctx, func(tx *sqldb.Tx) error {
		if err := lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		if newName != nil {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE team_id = ? AND name = ? AND id <> ?`, teamID, *newName, userID).Scan(&n); err != nil {
				return fmt.Errorf("update user: %w", err)
			}
			if n > 0 {
				return storeerr.ErrAlreadyExists
			}
			if _, err := tx.ExecContext(ctx, `UPDATE users SET name = ? WHERE id = ?`, *newName, userID); err != nil {
				return fmt.Errorf("update user: %w", err)
			}
		}
		if status != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET status = ? WHERE id = ?`, *status, userID); err != nil {
				return fmt.Errorf("update user: %w", err)
			}
			if *status == "disabled" {
				if _, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL`, sqldb.Micros(now), userID); err != nil {
					return fmt.Errorf("revoke tokens: %w", err)
				}
			}
		}
		return nil
	})
}

// addMember puts a user in a group; storeerr.ErrAlreadyExists when it is in already.
func (s *store) addMember(ctx context.Context, groupID, userID string) error {
	return s.change(ctx, "add member", storeerr.ErrAlreadyExists, `INSERT INTO group_members (group_id, user_id) VALUES (?, ?) ON CONFLICT (group_id, user_id) DO NOTHING`,
		groupID, userID)
}

// removeMember takes a user out of a group; storeerr.ErrNotFound when it was not in it.
func (s *store) removeMember(ctx context.Context, groupID, userID string) error {
	return s.change(ctx, "remove member", storeerr.ErrNotFound, `DELETE FROM group_members WHERE group_id = ? AND user_id = ?`,
		groupID, userID)
}

// serviceKey is a live service-user key (never its secret).
type serviceKey struct {
	ID        string
	CreatedAt time.Time
	ExpiresAt *time.Time
}

// listKeys pages through a service user's live keys, ordered by id.
func (s *store) listKeys(ctx context.Context, userID string, pos *keyset, backwards bool, limit int) ([]serviceKey, bool, error) {
	q := pageQuery{sel: `SELECT id, created_at, expires_at FROM service_keys`, nameCol: "id", idCol: "id"}
	q.and(`user_id = ?`, userID)
	q.and(`deleted_at IS NULL`)
	return queryPage(ctx, s, q, pos, backwards, limit, func(rows *sql.Rows) (serviceKey, error) {
		var k serviceKey
		err := rows.Scan(&k.ID, sqldb.TimeInto(&k.CreatedAt), sqldb.NullTimeInto(&k.ExpiresAt))
		return k, err
	})
}

// addKey issues a key for a service user, within the team's keys quota, and
// returns it with its secret (stored hashed only).
func (s *store) addKey(ctx context.Context, teamID, userID string, expires *time.Time, now time.Time) (serviceKey, string, error) {
	k := serviceKey{ID: uuid.NewString(), CreatedAt: storedTime(now)}
	if expires != nil {
		e := storedTime(*expires)
		k.ExpiresAt = &e
	}
	secret := randomSecret()
	err := s.inTx(ctx, func(tx *sqldb.Tx) error {
		if err := lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		if err := checkQuota(ctx, tx, teamID, quotaKeysPerServiceUser,
			`SELECT COUNT(*) FROM service_keys WHERE user_id = ? AND deleted_at IS NULL`, userID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO service_keys (id, user_id, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			k.ID, userID, hashSecret(secret), sqldb.Micros(k.CreatedAt), sqldb.NullMicros(k.ExpiresAt)); err != nil {
			return fmt.Errorf("create key: %w", err)
		}
		return nil
	})
	if err != nil {
		return serviceKey{}, "", err
	}
	return k, secret, nil
}

// deleteKey deletes a live key of a service user.
func (s *store) deleteKey(ctx context.Context, userID, keyID string, now time.Time) error {
	return s.change(ctx, "delete key", storeerr.ErrNotFound, `UPDATE service_keys SET deleted_at = ? WHERE id = ? AND user_id = ? AND deleted_at IS NULL`,
		sqldb.Micros(now), keyID, userID)
}

// offline reads the stored maintenance switch.
func (s *store) offline(ctx context.Context) (bool, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = 'maintenance'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read maintenance switch: %w", err)
	}
	return string(v) == "on", nil
}

// setOffline stores the maintenance switch.
func (s *store) setOffline(ctx context.Context, offline bool) error {
	v := "off"
	if offline {
		v = "on"
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO settings (name, value) VALUES ('maintenance', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`, []byte(v))
	if err != nil {
		return fmt.Errorf("store maintenance switch: %w", err)
	}
	return nil
}
