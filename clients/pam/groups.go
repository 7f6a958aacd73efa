package pam

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"

	"github.com/apistack/apistack/clients/internal/linkheader"
	"github.com/apistack/apistack/gen/pamapi"
)

// Group is a PAM group.
type Group = pamapi.Group

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
func (c *Client) Groups(ctx context.Context, opts *ListGroupsOptions) iter.Seq2[Group, error] {
	if opts == nil {
		opts = &ListGroupsOptions{}
	}
	params := &pamapi.ListGroupsParams{}
	if opts.PageSize > 0 {
		params.Count = &opts.PageSize
	}
	if opts.IncludeDeleted {
		params.IncludeDeleted = &opts.IncludeDeleted
	}
	if opts.Contains != "" {
		params.Contains = &opts.Contains
	}
	return func(yield func(Group, error) bool) {
		resp, err := c.api.ListGroupsWithResponse(ctx, c.team, params)
		for {
			if err != nil {
				yield(Group{}, fmt.Errorf("pam: list groups: %w", err))
				return
			}
			if resp.JSON200 == nil {
				yield(Group{}, fmt.Errorf("pam: list groups: %w", parseError(resp.HTTPResponse, resp.Body)))
				return
			}
			for _, g := range resp.JSON200.List {
				if !yield(g, nil) {
					return
				}
			}
			next, ok, lerr := nextLink(resp.HTTPResponse)
			if lerr != nil {
				yield(Group{}, fmt.Errorf("pam: list groups: %w", lerr))
				return
			}
			if !ok {
				return
			}
			resp, err = c.followGroups(ctx, next)
		}
	}
}

// followGroups fetches the page at a rel="next" URL as the server gave it.
func (c *Client) followGroups(ctx context.Context, next *url.URL) (*pamapi.ListGroupsResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, next.String(), nil)
	if err != nil {
		return nil, err
	}
	rsp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	return pamapi.ParseListGroupsResponse(rsp)
}

// nextLink returns the rel="next" URL of a page, resolved against the URL
// of the request that fetched it.
func nextLink(resp *http.Response) (*url.URL, bool, error) {
	links, err := linkheader.Parse(resp.Header.Values("Link")...)
	if err != nil {
		return nil, false, fmt.Errorf("malformed Link header: %w", err)
	}
	next, ok := linkheader.Find(links, "next")
	if !ok {
		return nil, false, nil
	}
	u, err := url.Parse(next.URI)
	if err != nil {
		return nil, false, fmt.Errorf("malformed next link %q: %w", next.URI, err)
	}
	return resp.Request.URL.ResolveReference(u), true, nil
}
