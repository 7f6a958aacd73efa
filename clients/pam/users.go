package pam

import (
	"context"
	"iter"
	"net/http"
	"time"

	"github.com/apistack/apistack/gen/pamapi"
)

// UserKind says whether a user is a human or a service user.
type UserKind string

// UserStatus is whether a user is active or disabled.
type UserStatus string

// The kinds and statuses of users.
const (
	Human    UserKind   = "human"
	Service  UserKind   = "service"
	Active   UserStatus = "active"
	Disabled UserStatus = "disabled"
)

// ListUsersOptions narrows a user listing; the zero value lists every user.
type ListUsersOptions struct {
	// PageSize is the number of users per request; 0 means the server's default.
	PageSize int
	// Contains keeps users whose name contains this text.
	Contains string
	// Kind keeps users of this kind ("" for both).
	Kind UserKind
	// Status keeps users in this status ("" for both).
	Status UserStatus
}

// Users iterates over the team's users, human and service.
func (c *Client) ListUsers(ctx context.Context, opts *ListUsersOptions) iter.Seq2[User, error] {
	if opts == nil {
		opts = &ListUsersOptions{}
	}
	params := &pamapi.ListUsersParams{Count: pageSize(opts.PageSize)}
	if opts.Contains != "" {
		params.Contains = &opts.Contains
	}
	if opts.Kind != "" {
		k := pamapi.UserKind(opts.Kind)
		params.Kind = &k
	}
	if opts.Status != "" {
		st := pamapi.UserStatus(opts.Status)
		params.Status = &st
	}
	return listAll[User](ctx, c, "list users", func(ctx context.Context) (*http.Response, error) {
		return c.api.ClientInterface.ListUsers(ctx, c.team, params)
	})
}

// GetUser returns a user by name.
func (c *Client) GetUser(ctx context.Context, name string) (*User, error) {
	resp, err := c.api.GetUserWithResponse(ctx, c.team, name)
	if err != nil {
		return nil, failed("get user", err)
	}
	if resp.JSON200 == nil {
		return nil, answerError("get user", resp.HTTPResponse, resp.Body)
	}
	return decode[User](resp.Body)
}

// CurrentUser returns the user the client authenticates as, with its
// effective roles.
func (c *Client) GetCurrentUser(ctx context.Context) (*CurrentUser, error) {
	resp, err := c.api.GetCurrentUserWithResponse(ctx, c.team)
	if err != nil {
		return nil, failed("get current user", err)
	}
	if resp.JSON200 == nil {
		return nil, answerError("get current user", resp.HTTPResponse, resp.Body)
	}
	return decode[CurrentUser](resp.Body)
}

// ListServiceUsersOptions narrows a service-user listing.
type ListServiceUsersOptions struct {
	// PageSize is the number of service users per request; 0 means the
	// server's default.
	PageSize int
	// Contains keeps service users whose name contains this text.
	Contains string
	// Status keeps service users in this status ("" for both).
	Status UserStatus
}

// ServiceUsers iterates over the team's service users.
func (c *Client) ListServiceUsers(ctx context.Context, opts *ListServiceUsersOptions) iter.Seq2[ServiceUser, error] {
	if opts == nil {
		opts = &ListServiceUsersOptions{}
	}
	params := &pamapi.ListServiceUsersParams{Count: pageSize(opts.PageSize)}
	if opts.Contains != "" {
		params.Contains = &opts.Contains
	}
	if opts.Status != "" {
		st := pamapi.UserStatus(opts.Status)
		params.Status = &st
	}
	return listAll[ServiceUser](ctx, c, "list service users", func(ctx context.Context) (*http.Response, error) {
		return c.api.ClientInterface.ListServiceUsers(ctx, c.team, params)
	})
}

// CreateServiceUser creates an active service user without keys.
func (c *Client) CreateServiceUser(ctx context.Context, name string) (*ServiceUser, error) {
	resp, err := c.api.CreateServiceUserWithResponse(ctx, c.team, pamapi.CreateServiceUserJSONRequestBody{Name: name})
	if err != nil {
		return nil, failed("create service user", err)
	}
	if resp.JSON201 == nil {
		return nil, answerError("create service user", resp.HTTPResponse, resp.Body)
	}
	return decode[ServiceUser](resp.Body)
}

// GetServiceUser returns a service user by name.
func (c *Client) GetServiceUser(ctx context.Context, name string) (*ServiceUser, error) {
	resp, err := c.api.GetServiceUserWithResponse(ctx, c.team, name)
	if err != nil {
		return nil, failed("get service user", err)
	}
	if resp.JSON200 == nil {
		return nil, answerError("get service user", resp.HTTPResponse, resp.Body)
	}
	return decode[ServiceUser](resp.Body)
}

// UpdateServiceUserOptions says what to change; empty fields stay as they are.
type UpdateServiceUserOptions struct {
	// Name renames the service user.
	Name string
	// Status disables (ending its tokens' access) or enables the user.
	Status UserStatus
}

// UpdateServiceUser renames, disables or enables a service user.
func (c *Client) UpdateServiceUser(ctx context.Context, name string, opts UpdateServiceUserOptions) error {
	body := pamapi.UpdateServiceUserJSONRequestBody{}
	if opts.Name != "" {
		body.Name = &opts.Name
	}
	if opts.Status != "" {
		st := pamapi.UserStatus(opts.Status)
		body.Status = &st
	}
	resp, err := c.api.UpdateServiceUserWithResponse(ctx, c.team, name, body)
	if err != nil {
		return failed("update service user", err)
	}
	return noContent("update service user", resp.HTTPResponse, resp.Body)
}

// ServiceUserKeys iterates over a service user's live keys (never secrets).
func (c *Client) ListServiceUserKeys(ctx context.Context, user string, opts *ListOptions) iter.Seq2[ServiceUserKey, error] {
	params := &pamapi.ListServiceUserKeysParams{Count: opts.count()}
	return listAll[ServiceUserKey](ctx, c, "list service user keys", func(ctx context.Context) (*http.Response, error) {
		return c.api.ClientInterface.ListServiceUserKeys(ctx, c.team, user, params)
	})
}

// CreateServiceUserKeyOptions configures a new key.
type CreateServiceUserKeyOptions struct {
	// ExpiresAt is when the key stops issuing tokens; zero means never.
	ExpiresAt time.Time
}

// CreateServiceUserKey issues a key for a service user. Its secret is in
// the answer only: keep it, the server stores a hash.
func (c *Client) CreateServiceUserKey(ctx context.Context, user string, opts *CreateServiceUserKeyOptions) (*ServiceUserKeySecret, error) {
	body := pamapi.CreateServiceUserKeyJSONRequestBody{}
	if opts != nil && !opts.ExpiresAt.IsZero() {
		body.ExpiresAt = &opts.ExpiresAt
	}
	resp, err := c.api.CreateServiceUserKeyWithResponse(ctx, c.team, user, body)
	if err != nil {
		return nil, failed("create service user key", err)
	}
	if resp.JSON201 == nil {
		return nil, answerError("create service user key", resp.HTTPResponse, resp.Body)
	}
	return decode[ServiceUserKeySecret](resp.Body)
}

// DeleteServiceUserKey deletes a key: it issues no more tokens and the
// tokens it issued stop working.
func (c *Client) DeleteServiceUserKey(ctx context.Context, user, keyID string) error {
	resp, err := c.api.DeleteServiceUserKeyWithResponse(ctx, c.team, user, keyID)
	if err != nil {
		return failed("delete service user key", err)
	}
	return noContent("delete service user key", resp.HTTPResponse, resp.Body)
}
