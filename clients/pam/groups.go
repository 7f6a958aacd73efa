package pam

import (
	"context"
	"iter"
	"net/http"

	"github.com/apistack/apistack/gen/pamapi"
)

// Role is a role a group grants its members.
type Role string

// The roles of the PAM API.
const (
	PAMAdmin               Role = "pam_admin"
	ResourceAdmin          Role = "resource_admin"
	DelegatedResourceAdmin Role = "delegated_resource_admin"
	SecurityAdmin          Role = "security_admin"
	DelegatedSecurityAdmin Role = "delegated_security_admin"
	EndUser                Role = "end_user"
)

// ListGroupsOptions narrows a group listing. The zero value lists every live
// group in pages of the server's default size.
type ListGroupsOptions struct {
	// PageSize is the number of groups per request (1..1000); 0 means the
	// server's default (100).
	PageSize int
	// IncludeDeleted also lists soft-deleted groups.
	IncludeDeleted bool
	// Contains keeps groups whose name contains this text.
	Contains string
}

// Groups iterates over every group of the team, following the pagination
// links to the end. It stops at the first error, which it yields.
func (c *Client) ListGroups(ctx context.Context, opts *ListGroupsOptions) iter.Seq2[Group, error] {
	if opts == nil {
		opts = &ListGroupsOptions{}
	}
	params := &pamapi.ListGroupsParams{Count: pageSize(opts.PageSize)}
	if opts.IncludeDeleted {
		params.IncludeDeleted = &opts.IncludeDeleted
	}
	if opts.Contains != "" {
		params.Contains = &opts.Contains
	}
	return listAll[Group](ctx, c, "list groups", func(ctx context.Context) (*http.Response, error) {
		return c.api.ClientInterface.ListGroups(ctx, c.team, params)
	})
}

// GetGroup returns a group by name; a deleted group has DeletedAt set.
func (c *Client) GetGroup(ctx context.Context, name string) (*Group, error) {
	resp, err := c.api.GetGroupWithResponse(ctx, c.team, name)
	if err != nil {
		return nil, failed("get group", err)
	}
	if resp.JSON200 == nil {
		return nil, answerError("get group", resp.HTTPResponse, resp.Body)
	}
	return decode[Group](resp.Body)
}

// CreateGroup creates a group granting roles to its members.
func (c *Client) CreateGroup(ctx context.Context, name string, roles ...Role) (*Group, error) {
	if roles == nil {
		roles = []Role{}
	}
	resp, err := c.api.CreateGroupWithResponse(ctx, c.team, pamapi.CreateGroupJSONRequestBody{Name: name, Roles: wireRoles(roles)})
	if err != nil {
		return nil, failed("create group", err)
	}
	if resp.JSON201 == nil {
		return nil, answerError("create group", resp.HTTPResponse, resp.Body)
	}
	return decode[Group](resp.Body)
}

// UpdateGroup replaces the roles a live group grants.
func (c *Client) UpdateGroup(ctx context.Context, name string, roles ...Role) error {
	if roles == nil {
		roles = []Role{}
	}
	resp, err := c.api.UpdateGroupWithResponse(ctx, c.team, name, pamapi.UpdateGroupJSONRequestBody{Roles: wireRoles(roles)})
	if err != nil {
		return failed("update group", err)
	}
	return noContent("update group", resp.HTTPResponse, resp.Body)
}

// DeleteGroup soft-deletes a live group; its members lose its roles at once.
func (c *Client) DeleteGroup(ctx context.Context, name string) error {
	resp, err := c.api.DeleteGroupWithResponse(ctx, c.team, name)
	if err != nil {
		return failed("delete group", err)
	}
	return noContent("delete group", resp.HTTPResponse, resp.Body)
}

// GroupMembers iterates over the users of a live group.
func (c *Client) ListGroupMembers(ctx context.Context, group string, opts *ListOptions) iter.Seq2[User, error] {
	params := &pamapi.ListGroupMembersParams{Count: opts.count()}
	return listAll[User](ctx, c, "list group members", func(ctx context.Context) (*http.Response, error) {
		return c.api.ClientInterface.ListGroupMembers(ctx, c.team, group, params)
	})
}

// AddGroupMember puts a user (human or service) in a live group.
func (c *Client) AddGroupMember(ctx context.Context, group, user string) error {
	resp, err := c.api.AddGroupMemberWithResponse(ctx, c.team, group, pamapi.AddGroupMemberJSONRequestBody{UserName: user})
	if err != nil {
		return failed("add group member", err)
	}
	return noContent("add group member", resp.HTTPResponse, resp.Body)
}

// RemoveGroupMember takes a user out of a live group.
func (c *Client) RemoveGroupMember(ctx context.Context, group, user string) error {
	resp, err := c.api.RemoveGroupMemberWithResponse(ctx, c.team, group, user)
	if err != nil {
		return failed("remove group member", err)
	}
	return noContent("remove group member", resp.HTTPResponse, resp.Body)
}

// Roles iterates over the roles a group can grant.
func (c *Client) ListRoles(ctx context.Context, opts *ListOptions) iter.Seq2[RoleInfo, error] {
	params := &pamapi.ListRolesParams{Count: opts.count()}
	return listAll[RoleInfo](ctx, c, "list roles", func(ctx context.Context) (*http.Response, error) {
		return c.api.ClientInterface.ListRoles(ctx, c.team, params)
	})
}

// wireRoles converts roles to the generated type of a request body.
func wireRoles(roles []Role) []pamapi.Role {
	out := make([]pamapi.Role, len(roles))
	for i, r := range roles {
		out[i] = pamapi.Role(r)
	}
	return out
}
