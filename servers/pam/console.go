package pam

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// The web console's view of PAM (servers/console): every team with its
// groups, users, service keys and rate-limit state. Never a secret: keys are
// shown by id, tokens are counted.

// ConsoleTeam is a team as the console shows it.
type ConsoleTeam struct {
	Team
	Groups []ConsoleGroup
	Users  []ConsoleUser
}

// ConsoleGroup is a live group with its roles and its members' names.
type ConsoleGroup struct {
	ID, Name string
	Roles    []string
	Members  []string
}

// ConsoleUser is a user with its keys and its rate-limit bucket.
type ConsoleUser struct {
	ID, Name, Kind, Status string
	CreatedAt              time.Time
	Keys                   []ConsoleKey
	// RateLimit is the user's bucket now (spending nothing): the requests
	// left of Limit, and when it is full again.
	RateLimit RateLimitState
}

// RateLimitState is a principal's rate-limit bucket.
type RateLimitState struct {
	Limit, Remaining int
	Reset            time.Time
}

// ConsoleKey is a live service key. A key is used at the token exchange
// only: LastUsedAt is when it last issued a token.
type ConsoleKey struct {
	ID         string
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	// Tokens counts the tokens the key issued; LiveTokens those neither
	// expired nor revoked.
	Tokens, LiveTokens int
}

// Console is what the web console (servers/console) reads of a PAM server.
// Server.Console gives a server's.
type Console Server

// Console is the console's view of s.
func (s *Server) Console() *Console { return (*Console)(s) }

// Teams returns every team, by name, with its groups, users and keys.
func (s *Console) Teams(ctx context.Context) ([]ConsoleTeam, error) {
	teams, err := apistore.Collect(ctx, s.store.db, func(rows *sql.Rows, t *ConsoleTeam) error {
		return rows.Scan(&t.ID, &t.Name, &t.Disabled, sqldb.TimeInto(&t.CreatedAt))
	}, `SELECT id, name, disabled, created_at FROM teams ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("console teams: %w", err)
	}
	for i := range teams {
		if err := s.fillConsoleTeam(ctx, &teams[i]); err != nil {
			return nil, err
		}
	}
	return teams, nil
}

func (s *Console) fillConsoleTeam(ctx context.Context, t *ConsoleTeam) error {
	groups, err := s.store.db.QueryContext(ctx, `SELECT g.id, g.name, g.roles, COALESCE(u.name, '')
		FROM team_groups g LEFT JOIN group_members m ON m.group_id = g.id LEFT JOIN users u ON u.id = m.user_id
		WHERE g.team_id = ? AND g.deleted_at IS NULL ORDER BY g.name, g.id, u.name`, t.ID)
	if err != nil {
		return fmt.Errorf("console groups: %w", err)
	}
	for groups.Next() {
		var id, name, roles, member string
		if err := groups.Scan(&id, &name, &roles, &member); err != nil {
			groups.Close()
			return fmt.Errorf("console groups: %w", err)
		}
		if n := len(t.Groups); n == 0 || t.Groups[n-1].ID != id {
			t.Groups = append(t.Groups, ConsoleGroup{ID: id, Name: name, Roles: splitRoles(roles)})
		}
		if member != "" {
			g := &t.Groups[len(t.Groups)-1]
			g.Members = append(g.Members, member)
		}
	}
	groups.Close()
	if err := groups.Err(); err != nil {
		return fmt.Errorf("console groups: %w", err)
	}

	now := s.clock.Now().UTC()
	users, err := s.store.db.QueryContext(ctx, `SELECT u.id, u.name, u.kind, u.status, u.created_at,
		COALESCE(k.id, ''), k.created_at, k.expires_at,
		(SELECT COUNT(*) FROM tokens WHERE key_id = k.id),
		(SELECT COUNT(*) FROM tokens WHERE key_id = k.id AND expires_at > ? AND revoked_at IS NULL)
		FROM users u LEFT JOIN service_keys k ON k.user_id = u.id AND k.deleted_at IS NULL
		WHERE u.team_id = ? AND u.status <> 'deleted' ORDER BY u.name, u.id, k.created_at, k.id`, sqldb.Micros(now), t.ID)
	if err != nil {
		return fmt.Errorf("console users: %w", err)
	}
	defer users.Close()
	for users.Next() {
		var u ConsoleUser
		var k ConsoleKey
		var keyCreated, keyExpires sql.NullInt64
		if err := users.Scan(&u.ID, &u.Name, &u.Kind, &u.Status, sqldb.TimeInto(&u.CreatedAt), &k.ID, &keyCreated, &keyExpires, &k.Tokens, &k.LiveTokens); err != nil {
			return fmt.Errorf("console users: %w", err)
		}
		if n := len(t.Users); n == 0 || t.Users[n-1].ID != u.ID {
			t.Users = append(t.Users, u)
		}
		if k.ID == "" {
			continue
		}
		k.CreatedAt = sqldb.Time(keyCreated.Int64)
		k.ExpiresAt = sqldb.NullTime(keyExpires)
		last := &t.Users[len(t.Users)-1]
		last.Keys = append(last.Keys, k)
	}
	if err := users.Err(); err != nil {
		return fmt.Errorf("console users: %w", err)
	}
	users.Close()
	// The last use is read key by key, with the rows closed.
	for i := range t.Users {
		// Read with the rows closed: the limiter's store may be this database.
		d, err := s.limiter.Peek(ctx, "user:"+t.Users[i].ID)
		if err != nil {
			return fmt.Errorf("console rate limit: %w", err)
		}
		t.Users[i].RateLimit = RateLimitState{Limit: d.Limit, Remaining: d.Remaining, Reset: d.Reset}
		for j := range t.Users[i].Keys {
			k := &t.Users[i].Keys[j]
			if k.Tokens == 0 {
				continue
			}
			var last time.Time
			err := s.store.db.QueryRowContext(ctx, `SELECT created_at FROM tokens WHERE key_id = ? ORDER BY created_at DESC LIMIT 1`, k.ID).Scan(sqldb.TimeInto(&last))
			if err != nil {
				return fmt.Errorf("console key last use: %w", err)
			}
			k.LastUsedAt = &last
		}
	}
	return nil
}
