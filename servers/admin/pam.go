package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"github.com/apistack/apistack/servers/pam"
)

// CreatePAMTeam creates a PAM team.
func (s *Server) CreatePAMTeam(ctx context.Context, req adminserver.CreatePAMTeamRequestObject) (adminserver.CreatePAMTeamResponseObject, error) {
	t, err := s.cfg.PAM.CreateTeam(ctx, req.Body.Name)
	if err != nil {
		return nil, about(err, sentences{storeerr.ErrAlreadyExists: fmt.Sprintf("team %q exists already", req.Body.Name)})
	}
	return adminserver.CreatePAMTeam201JSONResponse(toAPITeam(t)), nil
}

// GetPAMTeam returns a PAM team.
func (s *Server) GetPAMTeam(ctx context.Context, req adminserver.GetPAMTeamRequestObject) (adminserver.GetPAMTeamResponseObject, error) {
	t, err := s.cfg.PAM.Team(ctx, req.TeamName)
	if err != nil {
		return nil, notFound(err, "team %q does not exist", req.TeamName)
	}
	return adminserver.GetPAMTeam200JSONResponse(toAPITeam(t)), nil
}

// UpdatePAMTeam disables or enables a PAM team.
func (s *Server) UpdatePAMTeam(ctx context.Context, req adminserver.UpdatePAMTeamRequestObject) (adminserver.UpdatePAMTeamResponseObject, error) {
	if req.Body.Disabled == nil {
		return nil, errBadRequest("the body names nothing to change; send {\"disabled\": true} or false")
	}
	t, err := s.cfg.PAM.SetTeamDisabled(ctx, req.TeamName, *req.Body.Disabled)
	if err != nil {
		return nil, notFound(err, "team %q does not exist", req.TeamName)
	}
	return adminserver.UpdatePAMTeam200JSONResponse(toAPITeam(t)), nil
}

// BootstrapPAMServiceUser creates a service user with one key in a group.
func (s *Server) BootstrapPAMServiceUser(ctx context.Context, req adminserver.BootstrapPAMServiceUserRequestObject) (adminserver.BootstrapPAMServiceUserResponseObject, error) {
	roles := make([]string, 0, len(req.Body.Roles))
	for _, r := range req.Body.Roles {
		roles = append(roles, string(r))
	}
	var ttl time.Duration
	if req.Body.KeyExpiresInSeconds != nil {
		ttl = time.Duration(*req.Body.KeyExpiresInSeconds) * time.Second
	}
	c, err := s.cfg.PAM.BootstrapServiceUser(ctx, req.TeamName, req.Body.Name, req.Body.Group, roles, ttl)
	if err != nil {
		return nil, userError(err, req.TeamName, req.Body.Name)
	}
	out := adminserver.BootstrapPAMServiceUser201JSONResponse{
		TeamName: c.TeamName, UserId: uuid.MustParse(c.UserID), UserName: c.UserName, Group: c.Group,
		KeyId: c.KeyID, KeySecret: c.KeySecret, KeyExpiresAt: c.KeyExpiresAt,
	}
	for _, r := range c.Roles {
		out.Roles = append(out.Roles, adminapi.PAMRole(r))
	}
	if out.Roles == nil {
		out.Roles = []adminapi.PAMRole{}
	}
	return out, nil
}

// userError says what the store sentinels mean when creating a user.
func userError(err error, team, user string) error {
	return about(err, sentences{
		storeerr.ErrNotFound:      fmt.Sprintf("team %q does not exist", team),
		storeerr.ErrAlreadyExists: fmt.Sprintf("user %q exists already in team %q", user, team),
	})
}

func toAPITeam(t pam.Team) adminapi.PAMTeam {
	return adminapi.PAMTeam{Id: uuid.MustParse(t.ID), Name: t.Name, Disabled: t.Disabled, CreatedAt: t.CreatedAt.UTC()}
}

// CreatePAMHumanUser creates a human user in a PAM team.
func (s *Server) CreatePAMHumanUser(ctx context.Context, req adminserver.CreatePAMHumanUserRequestObject) (adminserver.CreatePAMHumanUserResponseObject, error) {
	u, err := s.cfg.PAM.CreateHumanUser(ctx, req.TeamName, req.Body.Name)
	if err != nil {
		return nil, userError(err, req.TeamName, req.Body.Name)
	}
	return adminserver.CreatePAMHumanUser201JSONResponse{
		Id: uuid.MustParse(u.ID), Name: u.Name, Kind: adminapi.PAMUserKind(u.Kind),
		Status: adminapi.PAMUserStatus(u.Status), CreatedAt: u.CreatedAt.UTC(),
	}, nil
}

// GetPAMQuotas returns a PAM team's quotas.
func (s *Server) GetPAMQuotas(ctx context.Context, req adminserver.GetPAMQuotasRequestObject) (adminserver.GetPAMQuotasResponseObject, error) {
	q, err := s.cfg.PAM.TeamQuotas(ctx, req.TeamName)
	if err != nil {
		return nil, notFound(err, "team %q does not exist", req.TeamName)
	}
	return adminserver.GetPAMQuotas200JSONResponse(toAPIQuotas(q)), nil
}

// SetPAMQuotas replaces a PAM team's quotas.
func (s *Server) SetPAMQuotas(ctx context.Context, req adminserver.SetPAMQuotasRequestObject) (adminserver.SetPAMQuotasResponseObject, error) {
	q := pam.Quotas{Groups: req.Body.Groups, ServiceUsers: req.Body.ServiceUsers, KeysPerServiceUser: req.Body.KeysPerServiceUser}
	err := s.cfg.PAM.SetQuotas(ctx, req.TeamName, q)
	if err == nil {
		q, err = s.cfg.PAM.TeamQuotas(ctx, req.TeamName)
	}
	if err != nil {
		return nil, notFound(err, "team %q does not exist", req.TeamName)
	}
	return adminserver.SetPAMQuotas200JSONResponse(toAPIQuotas(q)), nil
}

// GetPAMMaintenance reports the PAM maintenance switch.
func (s *Server) GetPAMMaintenance(_ context.Context, _ adminserver.GetPAMMaintenanceRequestObject) (adminserver.GetPAMMaintenanceResponseObject, error) {
	return adminserver.GetPAMMaintenance200JSONResponse{Offline: s.cfg.PAM.Offline()}, nil
}

// SetPAMMaintenance takes the PAM API offline or brings it back.
func (s *Server) SetPAMMaintenance(ctx context.Context, req adminserver.SetPAMMaintenanceRequestObject) (adminserver.SetPAMMaintenanceResponseObject, error) {
	if err := s.cfg.PAM.SetOffline(ctx, req.Body.Offline); err != nil {
		return nil, err
	}
	return adminserver.SetPAMMaintenance200JSONResponse{Offline: s.cfg.PAM.Offline()}, nil
}

func toAPIQuotas(q pam.Quotas) adminapi.PAMQuotas {
	return adminapi.PAMQuotas{Groups: q.Groups, ServiceUsers: q.ServiceUsers, KeysPerServiceUser: q.KeysPerServiceUser}
}
