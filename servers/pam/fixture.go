package pam

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// fixture is the pam section of a sandbox's fixture (specs/sandbox,
// PAMFixture): groups with their roles, then human users and service users
// in those groups, the service users with keys named by the fixture.
type fixture struct {
	Groups []struct {
		Name  string   `json:"name"`
		Roles []string `json:"roles"`
	} `json:"groups"`
	Users        []fixtureUser `json:"users"`
	ServiceUsers []fixtureUser `json:"service_users"`
}

type fixtureUser struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
	Keys   []string `json:"keys"`
}

// FixtureKey is a key a fixture made, as the sandbox API answers it under
// the fixture's name for it.
type FixtureKey struct {
	ServiceUser string `json:"service_user"`
	KeyID       string `json:"key_id"`
	KeySecret   string `json:"key_secret"`
}

// fixtureCredentials are the credentials the pam section of a fixture made:
// its keys by their names.
type fixtureCredentials struct {
	Keys map[string]FixtureKey `json:"keys"`
}

// validRoles are the roles a group may grant.
var validRoles = []string{"pam_admin", "resource_admin", "delegated_resource_admin", "security_admin", "delegated_security_admin", "end_user"}

// check refuses a section whose names clash (among themselves or with the
// set's seeded service user and group) or name what is not there.
func (f *fixture) check(set descriptor.TenantSet) error {
	groups := map[string]bool{set.Name + "-admins": true}
	for i, g := range f.Groups {
		if groups[g.Name] {
			return descriptor.Fixturef(fmt.Sprintf("/groups/%d/name", i), "the group %q is there already", g.Name)
		}
		groups[g.Name] = true
		for j, r := range g.Roles {
			if !slices.Contains(validRoles, r) {
				return descriptor.Fixturef(fmt.Sprintf("/groups/%d/roles/%d", i, j), "%q is not a role", r)
			}
		}
	}
	users := map[string]bool{set.Name + "-bot": true}
	keys := map[string]bool{}
	for _, section := range []struct {
		kind string
		list []fixtureUser
	}{{"users", f.Users}, {"service_users", f.ServiceUsers}} {
		kind := section.kind
		for i, u := range section.list {
			if users[u.Name] {
				return descriptor.Fixturef(fmt.Sprintf("/%s/%d/name", kind, i), "the user %q is there already", u.Name)
			}
			users[u.Name] = true
			for j, g := range u.Groups {
				if !groups[g] || g == set.Name+"-admins" {
					return descriptor.Fixturef(fmt.Sprintf("/%s/%d/groups/%d", kind, i, j), "the fixture creates no group %q", g)
				}
			}
			for j, k := range u.Keys {
				if keys[k] {
					return descriptor.Fixturef(fmt.Sprintf("/%s/%d/keys/%d", kind, i, j), "the key name %q is taken", k)
				}
				keys[k] = true
			}
		}
	}
	return nil
}

// applyFixture creates what the pam section describes in the set's team,
// in one transaction.
func applyFixture(ctx context.Context, s *Server, set descriptor.TenantSet, _ *DemoCredentials, section json.RawMessage) (json.RawMessage, error) {
	var f fixture
	if err := descriptor.DecodeFixture(section, &f); err != nil {
		return nil, err
	}
	if err := f.check(set); err != nil {
		return nil, err
	}
	now := sqldb.Micros(s.cfg.ClockFor(set.Name).Now())
	out := fixtureCredentials{Keys: map[string]FixtureKey{}}
	err := s.store.revokingTx(ctx, func(tx *sqldb.Tx) error {
		var teamID string
		if err := tx.QueryRowContext(ctx, `SELECT id FROM teams WHERE name = ?`, set.Name).Scan(&teamID); err != nil {
			return fmt.Errorf("read team %q: %w", set.Name, err)
		}
		if err := lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		// Each table's rows in one statement (a round trip each on
		// PostgreSQL).
		groupIDs := map[string]string{}
		var groups, users, members, keys rowsOf
		for _, g := range f.Groups {
			id := uuid.NewString()
			groupIDs[g.Name] = id
			groups.add(id, teamID, g.Name, joinRoles(g.Roles), now)
		}
		for _, section := range []struct {
			kind string
			list []fixtureUser
		}{{"human", f.Users}, {"service", f.ServiceUsers}} {
			for _, u := range section.list {
				id := uuid.NewString()
				users.add(id, teamID, u.Name, section.kind, "active", now)
				for _, g := range slices.Compact(slices.Sorted(slices.Values(u.Groups))) {
					members.add(groupIDs[g], id)
				}
				for _, k := range u.Keys {
					keyID, secret := uuid.NewString(), randomSecret()
					keys.add(keyID, id, hashSecret(secret), now)
					out.Keys[k] = FixtureKey{ServiceUser: u.Name, KeyID: keyID, KeySecret: secret}
				}
			}
		}
		for _, st := range []struct {
			insert string
			rows   rowsOf
		}{
			{`INSERT INTO team_groups (id, team_id, name, roles, created_at) VALUES `, groups},
			{`INSERT INTO users (id, team_id, name, kind, status, created_at) VALUES `, users},
			{`INSERT INTO group_members (group_id, user_id) VALUES `, members},
			{`INSERT INTO service_keys (id, user_id, secret_hash, created_at) VALUES `, keys},
		} {
			if err := st.rows.exec(ctx, tx, st.insert); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pam: fixture of %s: %w", set.Name, err)
	}
	if len(out.Keys) == 0 {
		return nil, nil
	}
	return json.Marshal(out)
}

// rowsOf are the values of rows to insert in one statement.
type rowsOf struct {
	n, width int
	args     []any
}

func (r *rowsOf) add(values ...any) {
	r.n, r.width = r.n+1, len(values)
	r.args = append(r.args, values...)
}

// exec inserts the rows with insert (the statement up to VALUES).
func (r rowsOf) exec(ctx context.Context, tx *sqldb.Tx, insert string) error {
	if r.n == 0 {
		return nil
	}
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", r.width), ", ") + ")"
	if _, err := tx.ExecContext(ctx, insert+strings.TrimSuffix(strings.Repeat(one+", ", r.n), ", "), r.args...); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	return nil
}

// copyTenants copies the team of set from (its users, groups, members,
// keys and quotas) into a new team of set to, in one transaction; every key
// gets a new secret, and no token is copied, so nothing of from's works on
// to.
func copyTenants(ctx context.Context, s *Server, from, to descriptor.TenantSet, creds *DemoCredentials, named json.RawMessage) (*DemoCredentials, json.RawMessage, error) {
	var names fixtureCredentials
	if len(named) > 0 {
		if err := json.Unmarshal(named, &names); err != nil {
			return nil, nil, fmt.Errorf("pam: copy: the fixture's credentials: %w", err)
		}
	}
	tag, teamID := descriptor.CopyTag(), uuid.NewString()
	secrets := map[string]string{} // new key id -> secret
	err := s.store.revokingTx(ctx, func(tx *sqldb.Tx) error {
		var fromID string
		err := tx.QueryRowContext(ctx, `SELECT id FROM teams WHERE name = ?`, from.Name).Scan(&fromID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("team %q: %w", from.Name, storeerr.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read team: %w", err)
		}
		bot, admins := []any{from.Name + "-bot", to.Name + "-bot"}, []any{from.Name + "-admins", to.Name + "-admins"}
		for _, st := range []struct {
			q    string
			args []any
		}{
			{`INSERT INTO teams (id, name, disabled, created_at) SELECT ?, ?, disabled, created_at FROM teams WHERE id = ?`,
				[]any{teamID, to.Name, fromID}},
			{`INSERT INTO users (id, team_id, name, kind, status, created_at)
				SELECT substr(id, 1, 24) || ?, ?, CASE WHEN name = ? THEN ? ELSE name END, kind, status, created_at FROM users WHERE team_id = ?`,
				[]any{tag, teamID, bot[0], bot[1], fromID}},
			{`INSERT INTO team_groups (id, team_id, name, roles, created_at, deleted_at)
				SELECT substr(id, 1, 24) || ?, ?, CASE WHEN name = ? THEN ? ELSE name END, roles, created_at, deleted_at FROM team_groups WHERE team_id = ?`,
				[]any{tag, teamID, admins[0], admins[1], fromID}},
			{`INSERT INTO group_members (group_id, user_id)
				SELECT substr(m.group_id, 1, 24) || ?, substr(m.user_id, 1, 24) || ? FROM group_members m JOIN users u ON u.id = m.user_id WHERE u.team_id = ?`,
				[]any{tag, tag, fromID}},
			{`INSERT INTO service_keys (id, user_id, secret_hash, created_at, expires_at, deleted_at)
				SELECT substr(k.id, 1, 24) || ?, substr(k.user_id, 1, 24) || ?, k.secret_hash, k.created_at, k.expires_at, k.deleted_at
				FROM service_keys k JOIN users u ON u.id = k.user_id WHERE u.team_id = ?`,
				[]any{tag, tag, fromID}},
			{`INSERT INTO team_quotas (team_id, resource, max_count) SELECT ?, resource, max_count FROM team_quotas WHERE team_id = ?`,
				[]any{teamID, fromID}},
		} {
			if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
				return fmt.Errorf("copy team: %w", err)
			}
		}
		// New secrets for the copied keys: the hashes copied above are
		// from's, which must not work on to.
		ids, err := apistore.Collect(ctx, tx, apistore.Scan[string],
			`SELECT k.id FROM service_keys k JOIN users u ON u.id = k.user_id WHERE u.team_id = ?`, teamID)
		if err != nil {
			return fmt.Errorf("read copied keys: %w", err)
		}
		for _, id := range ids {
			secret := randomSecret()
			secrets[id] = secret
			if _, err := tx.ExecContext(ctx, `UPDATE service_keys SET secret_hash = ? WHERE id = ?`, hashSecret(secret), id); err != nil {
				return fmt.Errorf("renew key secret: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("pam: copy %s to %s: %w", from.Name, to.Name, err)
	}
	out := &DemoCredentials{BaseURL: to.URLs[apiName], Team: to.Name, KeyID: descriptor.CopiedID(creds.KeyID, tag)}
	out.KeySecret = secrets[out.KeyID]
	if len(names.Keys) == 0 {
		return out, nil, nil
	}
	outNames := fixtureCredentials{Keys: map[string]FixtureKey{}}
	for name, k := range names.Keys {
		id := descriptor.CopiedID(k.KeyID, tag)
		outNames.Keys[name] = FixtureKey{ServiceUser: k.ServiceUser, KeyID: id, KeySecret: secrets[id]}
	}
	raw, err := json.Marshal(outNames)
	return out, raw, err
}
