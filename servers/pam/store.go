package pam

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations returns the PAM schema migrations (goose SQL files).
func Migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// Store errors, mapped onto API errors by the handlers.
var (
	errNotFound      = errors.New("not found")
	errAlreadyExists = errors.New("already exists")
)

// store is every SQL statement of the PAM service.
type store struct {
	db *sql.DB
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
	ExpiresAt    time.Time
}

// hashSecret is how key secrets and tokens are stored: both are 256-bit random
// values, so a plain SHA-256 is enough (no password stretching needed).
func hashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
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

// secretKey returns the named server secret, creating it at first use, so it
// survives restarts (page tokens stay valid).
func (s *store) secretKey(ctx context.Context, name string) ([]byte, error) {
	var key []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&key)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read setting %s: %w", name, err)
	}
	key = make([]byte, 32)
	_, _ = rand.Read(key)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, key); err != nil {
		return nil, fmt.Errorf("store setting %s: %w", name, err)
	}
	return s.secretKey(ctx, name)
}

func (s *store) createTeam(ctx context.Context, name string, now time.Time) (team, error) {
	t := team{ID: uuid.NewString(), Name: name, CreatedAt: now.UTC()}
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO teams (id, name, disabled, created_at) VALUES (?, ?, FALSE, ?) ON CONFLICT (name) DO NOTHING`,
		t.ID, t.Name, t.CreatedAt)
	if err != nil {
		return team{}, fmt.Errorf("create team: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return team{}, errAlreadyExists
	}
	return t, nil
}

func (s *store) teamByName(ctx context.Context, name string) (team, error) {
	var t team
	err := s.db.QueryRowContext(ctx,
		`SELECT id, name, disabled, created_at FROM teams WHERE name = ?`, name).
		Scan(&t.ID, &t.Name, &t.Disabled, &t.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return team{}, errNotFound
	}
	if err != nil {
		return team{}, fmt.Errorf("read team: %w", err)
	}
	return t, nil
}

func (s *store) setTeamDisabled(ctx context.Context, name string, disabled bool) (team, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE teams SET disabled = ? WHERE name = ?`, disabled, name)
	if err != nil {
		return team{}, fmt.Errorf("update team: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return team{}, errNotFound
	}
	return s.teamByName(ctx, name)
}

// serviceUserCredentials is what bootstrapping a service user returns.
type serviceUserCredentials struct {
	TeamName     string
	UserID       string
	UserName     string
	Group        string
	Roles        []string
	KeyID        string
	KeySecret    string
	KeyExpiresAt *time.Time
}

// bootstrapServiceUser creates a service user in a group (created or updated
// with roles) and issues one key, in one transaction.
func (s *store) bootstrapServiceUser(ctx context.Context, teamName, userName, groupName string, roles []string, keyTTL time.Duration, now time.Time) (serviceUserCredentials, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return serviceUserCredentials{}, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()

	var teamID string
	err = tx.QueryRowContext(ctx, `SELECT id FROM teams WHERE name = ?`, teamName).Scan(&teamID)
	if errors.Is(err, sql.ErrNoRows) {
		return serviceUserCredentials{}, fmt.Errorf("team %q: %w", teamName, errNotFound)
	}
	if err != nil {
		return serviceUserCredentials{}, fmt.Errorf("read team: %w", err)
	}
	now = now.UTC()
	userID := uuid.NewString()
	res, err := tx.ExecContext(ctx,
		`INSERT INTO users (id, team_id, name, kind, status, created_at) VALUES (?, ?, ?, 'service', 'active', ?)
		 ON CONFLICT (team_id, name) DO NOTHING`, userID, teamID, userName, now)
	if err != nil {
		return serviceUserCredentials{}, fmt.Errorf("create user: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return serviceUserCredentials{}, fmt.Errorf("user %q: %w", userName, errAlreadyExists)
	}

	var groupID string
	err = tx.QueryRowContext(ctx, `SELECT id FROM team_groups WHERE team_id = ? AND name = ? AND deleted_at IS NULL`, teamID, groupName).Scan(&groupID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		groupID = uuid.NewString()
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO team_groups (id, team_id, name, roles, created_at) VALUES (?, ?, ?, ?, ?)`,
			groupID, teamID, groupName, joinRoles(roles), now); err != nil {
			return serviceUserCredentials{}, fmt.Errorf("create group: %w", err)
		}
	case err != nil:
		return serviceUserCredentials{}, fmt.Errorf("read group: %w", err)
	default:
		if _, err := tx.ExecContext(ctx, `UPDATE team_groups SET roles = ? WHERE id = ?`, joinRoles(roles), groupID); err != nil {
			return serviceUserCredentials{}, fmt.Errorf("update group roles: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO group_members (group_id, user_id) VALUES (?, ?)`, groupID, userID); err != nil {
		return serviceUserCredentials{}, fmt.Errorf("add member: %w", err)
	}

	keyID, secret := uuid.NewString(), randomSecret()
	var expires *time.Time
	if keyTTL > 0 {
		e := now.Add(keyTTL)
		expires = &e
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO service_keys (id, user_id, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		keyID, userID, hashSecret(secret), now, expires); err != nil {
		return serviceUserCredentials{}, fmt.Errorf("create key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return serviceUserCredentials{}, fmt.Errorf("commit: %w", err)
	}
	return serviceUserCredentials{
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
		Scan(&k.ID, &k.UserID, &k.TeamID, &k.SecretHash, &k.ExpiresAt, &deletedAt, &k.UserStatus)
	if errors.Is(err, sql.ErrNoRows) {
		return keyRecord{}, errNotFound
	}
	if err != nil {
		return keyRecord{}, fmt.Errorf("read key: %w", err)
	}
	k.Deleted = deletedAt != nil
	return k, nil
}

func (s *store) insertToken(ctx context.Context, hash []byte, k keyRecord, now, expires time.Time) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO tokens (hash, key_id, user_id, team_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		hash, k.ID, k.UserID, k.TeamID, now.UTC(), expires.UTC())
	if err != nil {
		return fmt.Errorf("store token: %w", err)
	}
	return nil
}

func (s *store) tokenByHash(ctx context.Context, hash []byte) (tokenRecord, error) {
	var t tokenRecord
	var keyDeletedAt *time.Time
	err := s.db.QueryRowContext(ctx, `
		SELECT u.id, u.name, u.kind, u.status, tm.id, tm.name, tm.disabled, k.id, k.deleted_at, t.expires_at
		FROM tokens t
		JOIN service_keys k ON k.id = t.key_id
		JOIN users u ON u.id = t.user_id
		JOIN teams tm ON tm.id = t.team_id
		WHERE t.hash = ?`, hash).
		Scan(&t.UserID, &t.UserName, &t.UserKind, &t.UserStatus, &t.TeamID, &t.TeamName, &t.TeamDisabled, &t.KeyID, &keyDeletedAt, &t.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return tokenRecord{}, errNotFound
	}
	if err != nil {
		return tokenRecord{}, fmt.Errorf("read token: %w", err)
	}
	t.KeyDeleted = keyDeletedAt != nil
	return t, nil
}

// rolesOf returns the union of the roles of the live groups userID is in.
func (s *store) rolesOf(ctx context.Context, userID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT g.roles FROM team_groups g JOIN group_members m ON m.group_id = g.id
		WHERE m.user_id = ? AND g.deleted_at IS NULL`, userID)
	if err != nil {
		return nil, fmt.Errorf("read roles: %w", err)
	}
	defer rows.Close()
	var roles []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("read roles: %w", err)
		}
		roles = append(roles, splitRoles(r)...)
	}
	slices.Sort(roles)
	return slices.Compact(roles), rows.Err()
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

// listGroups returns up to limit groups after (or, backwards, before) pos in
// (name, id) order, and whether more exist beyond them in that direction.
func (s *store) listGroups(ctx context.Context, teamID string, f groupFilter, pos *keyset, backwards bool, limit int) ([]group, bool, error) {
	var where strings.Builder
	args := []any{teamID}
	where.WriteString(`team_id = ?`)
	if !f.IncludeDeleted {
		where.WriteString(` AND deleted_at IS NULL`)
	}
	if f.Contains != "" {
		where.WriteString(` AND LOWER(name) LIKE ? ESCAPE '\'`)
		args = append(args, "%"+escapeLike(strings.ToLower(f.Contains))+"%")
	}
	order := `name ASC, id ASC`
	if pos != nil {
		if backwards {
			where.WriteString(` AND (name < ? OR (name = ? AND id < ?))`)
		} else {
			where.WriteString(` AND (name > ? OR (name = ? AND id > ?))`)
		}
		args = append(args, pos.Name, pos.Name, pos.ID)
	}
	if backwards {
		order = `name DESC, id DESC`
	}
	args = append(args, limit+1)
	rows, err := s.db.QueryContext(ctx,
		`SELECT id, name, roles, deleted_at FROM team_groups WHERE `+where.String()+` ORDER BY `+order+` LIMIT ?`, args...)
	if err != nil {
		return nil, false, fmt.Errorf("list groups: %w", err)
	}
	defer rows.Close()
	groups := make([]group, 0, limit)
	for rows.Next() {
		var g group
		var roles string
		if err := rows.Scan(&g.ID, &g.Name, &roles, &g.DeletedAt); err != nil {
			return nil, false, fmt.Errorf("list groups: %w", err)
		}
		g.Roles = splitRoles(roles)
		groups = append(groups, g)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("list groups: %w", err)
	}
	more := len(groups) > limit
	if more {
		groups = groups[:limit]
	}
	if backwards {
		slices.Reverse(groups)
	}
	return groups, more, nil
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
		return "", "", nil, fmt.Errorf("service user %q of team %q: %w", userName, teamName, errNotFound)
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("read user: %w", err)
	}
	now = now.UTC()
	keyID, secret = uuid.NewString(), randomSecret()
	if keyTTL > 0 {
		e := now.Add(keyTTL)
		expires = &e
	}
	if _, err := s.db.ExecContext(ctx,
		`INSERT INTO service_keys (id, user_id, secret_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		keyID, userID, hashSecret(secret), now, expires); err != nil {
		return "", "", nil, fmt.Errorf("create key: %w", err)
	}
	return keyID, secret, expires, nil
}

// createGroup creates a live group; errAlreadyExists when a live group has the name.
func (s *store) createGroup(ctx context.Context, teamID, name string, roles []string, now time.Time) (group, error) {
	g := group{ID: uuid.NewString(), Name: name, Roles: splitRoles(joinRoles(roles))}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO team_groups (id, team_id, name, roles, created_at) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (team_id, name) WHERE deleted_at IS NULL DO NOTHING`,
		g.ID, teamID, name, joinRoles(roles), now.UTC())
	if err != nil {
		return group{}, fmt.Errorf("create group: %w", err)
	}
	var id string
	if err := s.db.QueryRowContext(ctx, `SELECT id FROM team_groups WHERE id = ?`, g.ID).Scan(&id); errors.Is(err, sql.ErrNoRows) {
		return group{}, errAlreadyExists
	} else if err != nil {
		return group{}, fmt.Errorf("create group: %w", err)
	}
	return g, nil
}
