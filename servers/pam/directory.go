package pam

import (
	"context"
	"errors"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"net/http"
	"net/url"
	"time"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/pamserver"
)

// The directory operations, in the order of the spec: the caller, groups and
// their members, users, service users and their keys, roles. Each runs only
// once the authorization (admit) let its caller in, by the roles the spec
// lists for it, and works on the caller's team only.

// noContent is the 204 answer of every update, delete, add and remove.
func noContent(ctx context.Context) pamserver.NoContentResponse {
	return pamserver.NoContentResponse{Headers: pamserver.NoContentResponseHeaders(rateHeadersFrom(ctx))}
}

// listHeaders are the headers of every list's answer: the Link to the other
// pages and the caller's rate limit.
type listHeaders struct {
	Link                *string
	XRateLimitLimit     int64
	XRateLimitRemaining int64
	XRateLimitReset     int64
	XRateLimitRetryAt   int64
}

// pageHeaders are the headers of a page of a list whose other pages link
// names.
func pageHeaders(ctx context.Context, link *string) listHeaders {
	rh := rateHeadersFrom(ctx)
	return listHeaders{link, rh.XRateLimitLimit, rh.XRateLimitRemaining, rh.XRateLimitReset, rh.XRateLimitRetryAt}
}

// mapStoreErr turns the store's sentinel errors into the API's answers.
func mapStoreErr(err error, notFound, exists string) error {
	switch {
	case errors.Is(err, storeerr.ErrNotFound):
		return errNoSuch("%s", notFound)
	case errors.Is(err, storeerr.ErrAlreadyExists):
		return newError(http.StatusConflict, pamapi.ErrorNameResourceAlreadyExists, "%s", exists)
	}
	return err
}

// liveGroupOf finds the caller's team's live group named name.
func (s *Server) liveGroupOf(ctx context.Context, name string) (*principal, group, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, group{}, err
	}
	g, err := s.store.liveGroup(ctx, p.TeamID, name)
	return p, g, mapStoreErr(err, "no live group named "+name, "")
}

// serviceUserOf finds the caller's team's service user named name.
func (s *Server) serviceUserOf(ctx context.Context, name string) (*principal, user, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, user{}, err
	}
	u, err := s.store.userByName(ctx, p.TeamID, name, "service")
	return p, u, mapStoreErr(err, "no service user named "+name, "")
}

// GetCurrentUser returns the caller with its effective roles.
func (s *Server) GetCurrentUser(ctx context.Context, req pamserver.GetCurrentUserRequestObject) (pamserver.GetCurrentUserResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.store.userByID(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	effective, err := s.effectiveRoles(ctx, p)
	if err != nil {
		return nil, err
	}
	roles := mapped(effective, toRole)
	return pamserver.GetCurrentUser200JSONResponse{
		Body: pamapi.CurrentUser{
			Id: mustUUID(u.ID), Name: u.Name, Kind: pamapi.UserKind(u.Kind), Status: pamapi.UserStatus(u.Status),
			CreatedAt: u.CreatedAt.UTC(), TeamName: p.TeamName, Roles: roles,
		},
		Headers: pamserver.GetCurrentUser200ResponseHeaders(rateHeadersFrom(ctx)),
	}, nil
}

// CreateGroup creates a group.
func (s *Server) CreateGroup(ctx context.Context, req pamserver.CreateGroupRequestObject) (pamserver.CreateGroupResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	g, err := s.store.createGroup(ctx, p.TeamID, req.Body.Name, rolesToStrings(req.Body.Roles), s.clock.Now())
	if err != nil {
		return nil, mapStoreErr(err, "", "a live group named "+req.Body.Name+" exists already")
	}
	return pamserver.CreateGroup201JSONResponse{Body: toAPIGroup(g), Headers: pamserver.CreateGroup201ResponseHeaders(rateHeadersFrom(ctx))}, nil
}

// GetGroup returns a group, live or deleted.
func (s *Server) GetGroup(ctx context.Context, req pamserver.GetGroupRequestObject) (pamserver.GetGroupResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	g, err := s.store.groupByName(ctx, p.TeamID, req.GroupName)
	if err != nil {
		return nil, mapStoreErr(err, "no group named "+req.GroupName, "")
	}
	return pamserver.GetGroup200JSONResponse{Body: toAPIGroup(g), Headers: pamserver.GetGroup200ResponseHeaders(rateHeadersFrom(ctx))}, nil
}

// UpdateGroup replaces a live group's roles.
func (s *Server) UpdateGroup(ctx context.Context, req pamserver.UpdateGroupRequestObject) (pamserver.UpdateGroupResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.store.updateGroupRoles(ctx, p.TeamID, req.GroupName, rolesToStrings(req.Body.Roles)); err != nil {
		return nil, mapStoreErr(err, "no live group named "+req.GroupName, "")
	}
	return pamserver.UpdateGroup204Response(noContent(ctx)), nil
}

// DeleteGroup soft-deletes a live group.
func (s *Server) DeleteGroup(ctx context.Context, req pamserver.DeleteGroupRequestObject) (pamserver.DeleteGroupResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.store.deleteGroup(ctx, p.TeamID, req.GroupName, s.clock.Now()); err != nil {
		return nil, mapStoreErr(err, "no live group named "+req.GroupName, "")
	}
	return pamserver.DeleteGroup204Response(noContent(ctx)), nil
}

// ListGroupMembers lists the users of a live group.
func (s *Server) ListGroupMembers(ctx context.Context, req pamserver.ListGroupMembersRequestObject) (pamserver.ListGroupMembersResponseObject, error) {
	p, g, err := s.liveGroupOf(ctx, req.GroupName)
	if err != nil {
		return nil, err
	}
	users, link, err := paginate(ctx, s, pageRequest{
		list: "members|" + g.ID, teamID: p.TeamID, count: req.Params.Count, offset: req.Params.Offset,
	}, userKey, func(ctx context.Context, pos *keyset, backwards bool, limit int) ([]user, bool, error) {
		return s.store.listMembers(ctx, g.ID, pos, backwards, limit)
	})
	if err != nil {
		return nil, err
	}
	return pamserver.ListGroupMembers200JSONResponse{Body: pamapi.UserList{List: toAPIUsers(users)}, Headers: pamserver.ListGroupMembers200ResponseHeaders(pageHeaders(ctx, link))}, nil
}

// AddGroupMember puts a user of the team in a live group.
func (s *Server) AddGroupMember(ctx context.Context, req pamserver.AddGroupMemberRequestObject) (pamserver.AddGroupMemberResponseObject, error) {
	p, g, err := s.liveGroupOf(ctx, req.GroupName)
	if err != nil {
		return nil, err
	}
	u, err := s.store.userByName(ctx, p.TeamID, req.Body.UserName, "")
	if err != nil {
		return nil, mapStoreErr(err, "no user named "+req.Body.UserName, "")
	}
	if err := s.store.addMember(ctx, g.ID, u.ID); err != nil {
		return nil, mapStoreErr(err, "", req.Body.UserName+" is a member of "+req.GroupName+" already")
	}
	return pamserver.AddGroupMember204Response(noContent(ctx)), nil
}

// RemoveGroupMember takes a user out of a live group.
func (s *Server) RemoveGroupMember(ctx context.Context, req pamserver.RemoveGroupMemberRequestObject) (pamserver.RemoveGroupMemberResponseObject, error) {
	p, g, err := s.liveGroupOf(ctx, req.GroupName)
	if err != nil {
		return nil, err
	}
	u, err := s.store.userByName(ctx, p.TeamID, req.UserName, "")
	if err != nil {
		return nil, mapStoreErr(err, "no user named "+req.UserName, "")
	}
	if err := s.store.removeMember(ctx, g.ID, u.ID); err != nil {
		return nil, mapStoreErr(err, req.UserName+" is not a member of "+req.GroupName, "")
	}
	return pamserver.RemoveGroupMember204Response(noContent(ctx)), nil
}

// ListUsers lists the team's users, human and service.
func (s *Server) ListUsers(ctx context.Context, req pamserver.ListUsersRequestObject) (pamserver.ListUsersResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f, filters := usersFiltered(req.Params.Contains, (*string)(req.Params.Kind), (*string)(req.Params.Status))
	users, link, err := paginate(ctx, s, pageRequest{
		list: "users", teamID: p.TeamID, count: req.Params.Count, offset: req.Params.Offset, filters: filters,
	}, userKey, func(ctx context.Context, pos *keyset, backwards bool, limit int) ([]user, bool, error) {
		return s.store.listUsers(ctx, p.TeamID, f, pos, backwards, limit)
	})
	if err != nil {
		return nil, err
	}
	return pamserver.ListUsers200JSONResponse{Body: pamapi.UserList{List: toAPIUsers(users)}, Headers: pamserver.ListUsers200ResponseHeaders(pageHeaders(ctx, link))}, nil
}

// GetUser returns a user of the team.
func (s *Server) GetUser(ctx context.Context, req pamserver.GetUserRequestObject) (pamserver.GetUserResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.store.userByName(ctx, p.TeamID, req.UserName, "")
	if err != nil {
		return nil, mapStoreErr(err, "no user named "+req.UserName, "")
	}
	return pamserver.GetUser200JSONResponse{Body: toAPIUser(u), Headers: pamserver.GetUser200ResponseHeaders(rateHeadersFrom(ctx))}, nil
}

// ListServiceUsers lists the team's service users.
func (s *Server) ListServiceUsers(ctx context.Context, req pamserver.ListServiceUsersRequestObject) (pamserver.ListServiceUsersResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	f, filters := usersFiltered(req.Params.Contains, nil, (*string)(req.Params.Status))
	f.Kind = "service"
	users, link, err := paginate(ctx, s, pageRequest{
		list: "service_users", teamID: p.TeamID, count: req.Params.Count, offset: req.Params.Offset, filters: filters,
	}, userKey, func(ctx context.Context, pos *keyset, backwards bool, limit int) ([]user, bool, error) {
		return s.store.listUsers(ctx, p.TeamID, f, pos, backwards, limit)
	})
	if err != nil {
		return nil, err
	}
	list := mapped(users, toAPIServiceUser)
	return pamserver.ListServiceUsers200JSONResponse{Body: pamapi.ServiceUserList{List: list}, Headers: pamserver.ListServiceUsers200ResponseHeaders(pageHeaders(ctx, link))}, nil
}

// CreateServiceUser creates an active service user without keys.
func (s *Server) CreateServiceUser(ctx context.Context, req pamserver.CreateServiceUserRequestObject) (pamserver.CreateServiceUserResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.store.createUser(ctx, p.TeamID, req.Body.Name, "service", s.clock.Now())
	if err != nil {
		return nil, mapStoreErr(err, "", "a user named "+req.Body.Name+" exists already")
	}
	return pamserver.CreateServiceUser201JSONResponse{Body: toAPIServiceUser(u), Headers: pamserver.CreateServiceUser201ResponseHeaders(rateHeadersFrom(ctx))}, nil
}

// GetServiceUser returns a service user.
func (s *Server) GetServiceUser(ctx context.Context, req pamserver.GetServiceUserRequestObject) (pamserver.GetServiceUserResponseObject, error) {
	_, u, err := s.serviceUserOf(ctx, req.UserName)
	if err != nil {
		return nil, err
	}
	return pamserver.GetServiceUser200JSONResponse{Body: toAPIServiceUser(u), Headers: pamserver.GetServiceUser200ResponseHeaders(rateHeadersFrom(ctx))}, nil
}

// UpdateServiceUser renames, disables or enables a service user.
func (s *Server) UpdateServiceUser(ctx context.Context, req pamserver.UpdateServiceUserRequestObject) (pamserver.UpdateServiceUserResponseObject, error) {
	p, u, err := s.serviceUserOf(ctx, req.UserName)
	if err != nil {
		return nil, err
	}
	var status *string
	if req.Body.Status != nil {
		st := string(*req.Body.Status)
		status = &st
	}
	if err := s.store.updateServiceUser(ctx, p.TeamID, u.ID, req.Body.Name, status, s.clock.Now()); err != nil {
		name := ""
		if req.Body.Name != nil {
			name = *req.Body.Name
		}
		return nil, mapStoreErr(err, "", "a user named "+name+" exists already")
	}
	return pamserver.UpdateServiceUser204Response(noContent(ctx)), nil
}

// ListServiceUserKeys lists a service user's live keys, never their secrets.
func (s *Server) ListServiceUserKeys(ctx context.Context, req pamserver.ListServiceUserKeysRequestObject) (pamserver.ListServiceUserKeysResponseObject, error) {
	p, u, err := s.serviceUserOf(ctx, req.UserName)
	if err != nil {
		return nil, err
	}
	keys, link, err := paginate(ctx, s, pageRequest{
		list: "keys|" + u.ID, teamID: p.TeamID, count: req.Params.Count, offset: req.Params.Offset,
	}, func(k serviceKey) keyset { return keyset{Name: k.ID, ID: k.ID} },
		func(ctx context.Context, pos *keyset, backwards bool, limit int) ([]serviceKey, bool, error) {
			return s.store.listKeys(ctx, u.ID, pos, backwards, limit)
		})
	if err != nil {
		return nil, err
	}
	list := mapped(keys, func(k serviceKey) pamapi.ServiceUserKey {
		return pamapi.ServiceUserKey{Id: k.ID, CreatedAt: k.CreatedAt.UTC(), ExpiresAt: utcPtr(k.ExpiresAt)}
	})
	return pamserver.ListServiceUserKeys200JSONResponse{Body: pamapi.ServiceUserKeyList{List: list}, Headers: pamserver.ListServiceUserKeys200ResponseHeaders(pageHeaders(ctx, link))}, nil
}

// CreateServiceUserKey issues a key and shows its secret this once.
func (s *Server) CreateServiceUserKey(ctx context.Context, req pamserver.CreateServiceUserKeyRequestObject) (pamserver.CreateServiceUserKeyResponseObject, error) {
	p, u, err := s.serviceUserOf(ctx, req.UserName)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	var expires *time.Time
	if req.Body != nil && req.Body.ExpiresAt != nil {
		if !req.Body.ExpiresAt.After(now) {
			return nil, errInvalid(pamapi.ErrorCauseLocationTypeBody, "/expires_at", "expires_at must be in the future")
		}
		expires = req.Body.ExpiresAt
	}
	k, secret, err := s.store.addKey(ctx, p.TeamID, u.ID, expires, now)
	if err != nil {
		return nil, err
	}
	return pamserver.CreateServiceUserKey201JSONResponse{
		Body:    pamapi.ServiceUserKeySecret{Id: k.ID, KeySecret: secret, CreatedAt: k.CreatedAt.UTC(), ExpiresAt: utcPtr(k.ExpiresAt)},
		Headers: pamserver.CreateServiceUserKey201ResponseHeaders(rateHeadersFrom(ctx)),
	}, nil
}

// DeleteServiceUserKey deletes a key; its tokens stop working at once.
func (s *Server) DeleteServiceUserKey(ctx context.Context, req pamserver.DeleteServiceUserKeyRequestObject) (pamserver.DeleteServiceUserKeyResponseObject, error) {
	_, u, err := s.serviceUserOf(ctx, req.UserName)
	if err != nil {
		return nil, err
	}
	if err := s.store.deleteKey(ctx, u.ID, req.KeyId, s.clock.Now()); err != nil {
		return nil, mapStoreErr(err, "no live key "+req.KeyId+" of "+req.UserName, "")
	}
	return pamserver.DeleteServiceUserKey204Response(noContent(ctx)), nil
}

// roleCatalog is every role with what it allows in this API, in name order.
var roleCatalog = []pamapi.RoleInfo{
	{Name: pamapi.RoleDelegatedResourceAdmin, Description: "Manages the projects of the resource groups assigned to it; reads the directory."},
	{Name: pamapi.RoleDelegatedSecurityAdmin, Description: "Creates security policies for resources in the assigned resource groups; reads the directory."},
	{Name: pamapi.RoleEndUser, Description: "Views and accesses resources granted by policies; implicit for every human user; sees no directory."},
	{Name: pamapi.RolePamAdmin, Description: "Administers groups, their roles and members, service users and their keys; reads the directory."},
	{Name: pamapi.RoleResourceAdmin, Description: "Administers project resources and resource groups; reads the directory."},
	{Name: pamapi.RoleSecurityAdmin, Description: "Creates security policies for every resource; reads the directory."},
}

func roleKey(r pamapi.RoleInfo) keyset { return keyset{Name: string(r.Name), ID: string(r.Name)} }

// ListRoles lists the roles a group can grant.
func (s *Server) ListRoles(ctx context.Context, req pamserver.ListRolesRequestObject) (pamserver.ListRolesResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	roles, link, err := paginate(ctx, s, pageRequest{
		list: "roles", teamID: p.TeamID, count: req.Params.Count, offset: req.Params.Offset,
	}, roleKey, sliceFetcher(roleCatalog, roleKey))
	if err != nil {
		return nil, err
	}
	if roles == nil {
		roles = []pamapi.RoleInfo{}
	}
	return pamserver.ListRoles200JSONResponse{Body: pamapi.RoleList{List: roles}, Headers: pamserver.ListRoles200ResponseHeaders(pageHeaders(ctx, link))}, nil
}

// usersFiltered is the filter of a list of users by the parameters given
// (nil: not filtered by it), and those parameters as the pages' links repeat
// them.
func usersFiltered(contains, kind, status *string) (userFilter, url.Values) {
	var f userFilter
	filters := url.Values{}
	for _, p := range []struct {
		name  string
		value *string
		field *string
	}{{"contains", contains, &f.Contains}, {"kind", kind, &f.Kind}, {"status", status, &f.Status}} {
		if p.value != nil {
			*p.field = *p.value
			addFilter(filters, p.name, p.value)
		}
	}
	return f, filters
}

func userKey(u user) keyset { return keyset{Name: u.Name, ID: u.ID} }

func toAPIUser(u user) pamapi.User {
	return pamapi.User{Id: mustUUID(u.ID), Name: u.Name, Kind: pamapi.UserKind(u.Kind), Status: pamapi.UserStatus(u.Status), CreatedAt: u.CreatedAt.UTC()}
}

func toAPIUsers(users []user) []pamapi.User { return mapped(users, toAPIUser) }

// mapped converts each element of in with f: an empty in gives an empty
// list (a JSON []), never nil.
func mapped[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}

func toRole(r string) pamapi.Role { return pamapi.Role(r) }

func toAPIServiceUser(u user) pamapi.ServiceUser {
	return pamapi.ServiceUser{Id: mustUUID(u.ID), Name: u.Name, Status: pamapi.UserStatus(u.Status), CreatedAt: u.CreatedAt.UTC()}
}

func rolesToStrings(roles []pamapi.Role) []string {
	out := make([]string, 0, len(roles))
	for _, r := range roles {
		out = append(out, string(r))
	}
	return out
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
