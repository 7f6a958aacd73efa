package pam

import (
	"context"
	"crypto/hmac"
	"time"
)

// Operator is the operator's side of a PAM server, beside its API: the calls
// the admin API, the demo seed and the test kit make. They bypass tokens and
// roles: the admin API guards them with its own token. Server.Operator gives
// a server's.
type Operator Server

// Operator is the operator's side of s.
func (s *Server) Operator() *Operator { return (*Operator)(s) }

// Team is a PAM tenant.
type Team struct {
	ID        string
	Name      string
	Disabled  bool
	CreatedAt time.Time
}

// ServiceUserCredentials is a bootstrapped service user with its one key.
// KeySecret is only ever known here; the store keeps its hash.
type ServiceUserCredentials struct {
	TeamName     string
	UserID       string
	UserName     string
	Group        string
	Roles        []string
	KeyID        string
	KeySecret    string
	KeyExpiresAt *time.Time
}

// CreateTeam creates a team; storeerr.ErrAlreadyExists when the name is taken.
func (s *Operator) CreateTeam(ctx context.Context, name string) (Team, error) {
	t, err := s.store.createTeam(ctx, name, s.clock.Now())
	return Team(t), err
}

// Team returns the named team; storeerr.ErrNotFound when there is none.
func (s *Operator) Team(ctx context.Context, name string) (Team, error) {
	t, err := s.store.teamByName(ctx, name)
	return Team(t), err
}

// SetTeamDisabled disables (or enables again) a team. A disabled team's calls
// answer 403 disabled_team.
func (s *Operator) SetTeamDisabled(ctx context.Context, name string, disabled bool) (Team, error) {
	t, err := s.store.setTeamDisabled(ctx, name, disabled)
	return Team(t), err
}

// BootstrapServiceUser creates a service user in group (created, or its roles
// replaced) and issues one key, valid for keyTTL (0: no expiry).
func (s *Operator) BootstrapServiceUser(ctx context.Context, teamName, userName, groupName string, roles []string, keyTTL time.Duration) (ServiceUserCredentials, error) {
	return s.store.bootstrapServiceUser(ctx, teamName, userName, groupName, roles, keyTTL, s.clock.Now())
}

// IssueKey issues a new key for an existing service user.
func (s *Operator) IssueKey(ctx context.Context, teamName, userName string, keyTTL time.Duration) (keyID, secret string, expires *time.Time, err error) {
	return s.store.createKey(ctx, teamName, userName, keyTTL, s.clock.Now())
}

// KeyWorks reports whether keyID/secret would issue a token on teamName now.
func (s *Operator) KeyWorks(ctx context.Context, teamName, keyID, secret string) bool {
	t, err := s.store.teamByName(ctx, teamName)
	if err != nil || t.Disabled {
		return false
	}
	k, err := s.store.keyByID(ctx, keyID)
	if err != nil || k.TeamID != t.ID || k.Deleted || k.UserStatus != "active" {
		return false
	}
	if k.ExpiresAt != nil && !s.clock.Now().Before(*k.ExpiresAt) {
		return false
	}
	return hmac.Equal(hashSecret(secret), k.SecretHash)
}

// CreateTeamGroup creates a group with roles in a team (operator call; the
// API's own CreateGroup checks the caller's roles). The team's group quota
// applies.
func (s *Operator) CreateTeamGroup(ctx context.Context, teamName, name string, roles []string) error {
	t, err := s.store.teamByName(ctx, teamName)
	if err != nil {
		return err
	}
	_, err = s.store.createGroup(ctx, t.ID, name, roles, s.clock.Now())
	return err
}

// TokenCount returns how many bearer tokens were ever issued (operators and
// tests watch it to see that refused requests issue none).
func (s *Operator) TokenCount(ctx context.Context) (int, error) {
	var n int
	err := s.store.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tokens`).Scan(&n)
	return n, err
}

// RevokeTokens ends every bearer token of a team at once (an operator's
// emergency stop); callers must exchange their keys again.
func (s *Operator) RevokeTokens(ctx context.Context, teamName string) error {
	_, err := s.store.db.ExecContext(ctx, `DELETE FROM tokens WHERE team_id = (SELECT id FROM teams WHERE name = ?)`, teamName)
	if err != nil {
		return err
	}
	s.store.changed()
	return nil
}

// User is a PAM user, human or service.
type User struct {
	ID        string
	Name      string
	Kind      string
	Status    string
	CreatedAt time.Time
}

// CreateHumanUser creates an active human user in a team (humans sign in
// through the dashboard, not the API, so only the operator creates them);
// storeerr.ErrNotFound for an unknown team, storeerr.ErrAlreadyExists for a taken name.
func (s *Operator) CreateHumanUser(ctx context.Context, teamName, name string) (User, error) {
	t, err := s.store.teamByName(ctx, teamName)
	if err != nil {
		return User{}, err
	}
	u, err := s.store.createUser(ctx, t.ID, name, "human", s.clock.Now())
	return User(u), err
}

// SetOffline puts the service in (or takes it out of) maintenance: while
// offline, every API call answers 503 service_offline. The switch is stored,
// so a restarted server stays in maintenance until told otherwise.
func (s *Operator) SetOffline(ctx context.Context, offline bool) error {
	if err := s.store.setOffline(ctx, offline); err != nil {
		return err
	}
	s.offlineSwitch.Invalidate()
	s.offline.Store(offline)
	return nil
}

// Offline reports whether the service is in maintenance. On a shared
// database it reads the stored switch (another replica may have flipped
// it), and answers the last switch seen when the database cannot be read
// within offlineReadTimeout.
func (s *Operator) Offline() bool {
	if s.store.db.Shared() {
		ctx, cancel := context.WithTimeout(context.Background(), offlineReadTimeout)
		defer cancel()
		gen := s.offlineSwitch.Generation()
		if offline, err := s.store.offline(ctx); err == nil {
			s.offline.Store(offline)
			s.offlineSwitch.Put(gen, "", offline)
		}
	}
	return s.offline.Load()
}

// offlineReadTimeout bounds Offline's read of the stored switch.
const offlineReadTimeout = 5 * time.Second

// Quotas limit what a team may create; a nil field means no limit.
type Quotas struct {
	// Groups bounds the team's live groups.
	Groups *int
	// ServiceUsers bounds the team's service users.
	ServiceUsers *int
	// KeysPerServiceUser bounds the live keys of each service user.
	KeysPerServiceUser *int
}

// SetQuotas replaces a team's quotas; a create over a quota answers 403
// quota_exceeded. Things that exist already are kept.
func (s *Operator) SetQuotas(ctx context.Context, teamName string, q Quotas) error {
	t, err := s.store.teamByName(ctx, teamName)
	if err != nil {
		return err
	}
	return s.store.setQuotas(ctx, t.ID, map[string]*int{quotaGroups: q.Groups, quotaServiceUsers: q.ServiceUsers, quotaKeysPerServiceUser: q.KeysPerServiceUser})
}

// TeamQuotas returns a team's quotas.
func (s *Operator) TeamQuotas(ctx context.Context, teamName string) (Quotas, error) {
	t, err := s.store.teamByName(ctx, teamName)
	if err != nil {
		return Quotas{}, err
	}
	m, err := s.store.quotas(ctx, t.ID)
	if err != nil {
		return Quotas{}, err
	}
	get := func(r string) *int {
		if n, ok := m[r]; ok {
			return &n
		}
		return nil
	}
	return Quotas{Groups: get(quotaGroups), ServiceUsers: get(quotaServiceUsers), KeysPerServiceUser: get(quotaKeysPerServiceUser)}, nil
}

// AddMember puts a user of a team in one of its live groups (operator call;
// the API's AddGroupMember checks the caller's roles).
func (s *Operator) AddMember(ctx context.Context, teamName, groupName, userName string) error {
	t, err := s.store.teamByName(ctx, teamName)
	if err != nil {
		return err
	}
	g, err := s.store.liveGroup(ctx, t.ID, groupName)
	if err != nil {
		return err
	}
	u, err := s.store.userByName(ctx, t.ID, userName, "")
	if err != nil {
		return err
	}
	return s.store.addMember(ctx, g.ID, u.ID)
}
