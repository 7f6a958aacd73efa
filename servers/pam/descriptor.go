package pam

import (
	"context"
	"errors"

	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// apiName is the PAM API's name.
const apiName = "pam"

// API describes the PAM API to the assemblers (servers/stack, `apistack
// serve`, the test kit, pamtest).
var API = descriptor.API[Settings, *Server, DemoCredentials]{
	Name: apiName, Files: migrationFiles, New: newFromEnv, Seed: seedTenants,
	Reset: resetTenants, Delete: deleteTenants, Fixture: applyFixture, Copy: copyTenants,
}

// newFromEnv is the pam server of an assembler.
func newFromEnv(ctx context.Context, e descriptor.Env, s Settings) (*Server, error) {
	return New(ctx, Config{Deps: e.Deps, Settings: s, DisableValidation: e.DisableValidation})
}

// DemoCredentials is the pam section of demo-credentials.json: a key of a
// service user with the pam_admin role.
type DemoCredentials struct {
	BaseURL   string `json:"base_url"`
	Team      string `json:"team"`
	KeyID     string `json:"key_id"`
	KeySecret string `json:"key_secret"`
}

// seedTenants creates the set's team (named after the set) with a service
// user <set>-bot in a group <set>-admins holding pam_admin, and returns its
// key: the previous one while it works, else a fresh one.
func seedTenants(ctx context.Context, srv *Server, set descriptor.TenantSet, previous *DemoCredentials) (*DemoCredentials, error) {
	s := srv.Operator()
	team, user, group := set.Name, set.Name+"-bot", set.Name+"-admins"
	if _, err := s.CreateTeam(ctx, team); err != nil && !errors.Is(err, storeerr.ErrAlreadyExists) {
		return nil, err
	}
	if _, err := s.SetTeamDisabled(ctx, team, false); err != nil {
		return nil, err
	}
	out := &DemoCredentials{BaseURL: set.URLs[apiName], Team: team}
	if previous != nil && previous.Team == team && s.KeyWorks(ctx, team, previous.KeyID, previous.KeySecret) {
		out.KeyID, out.KeySecret = previous.KeyID, previous.KeySecret
		return out, nil
	}
	c, err := s.BootstrapServiceUser(ctx, team, user, group, []string{"pam_admin"}, 0)
	if err == nil {
		out.KeyID, out.KeySecret = c.KeyID, c.KeySecret
		return out, nil
	}
	if !errors.Is(err, storeerr.ErrAlreadyExists) {
		return nil, err
	}
	if out.KeyID, out.KeySecret, _, err = s.IssueKey(ctx, team, user, 0); err != nil {
		return nil, err
	}
	return out, nil
}
