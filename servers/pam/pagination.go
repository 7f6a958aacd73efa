package pam

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/apistack/apistack/gen/pamapi"
)

// Every list of the API pages the same way: keyset pagination on (name, id),
// an opaque HMAC-signed offset bound to the list, the team and the filters
// (its scope), and RFC 8288 links to the next and previous pages carrying
// count and the filters. paginate is that one behaviour; each list supplies
// how to fetch a page and where an item sits in the order.

const defaultPageSize = 100

// cursor is the position an offset token carries.
type cursor struct {
	keyset
	Backwards bool `json:"b,omitempty"`
	// Edge means no position: the start of the list going forwards, its end
	// going backwards. An empty page links with it, since the position it
	// was asked for no longer has a neighbour to anchor the link on.
	Edge bool `json:"e,omitempty"`
}

// pageRequest is one request of a list.
type pageRequest struct {
	// list names the list and its parent ("groups", "members|<group id>").
	list string
	// teamID is the tenant; offsets never cross teams.
	teamID string
	// count and offset are the request's pagination parameters.
	count  *int
	offset *string
	// filters are the request's filter parameters, carried into every link
	// and bound into the scope of every offset.
	filters url.Values
}

// pageFetcher returns up to limit items after (or, backwards, before) pos in
// (name, id) order, in that order, and whether more exist beyond them.
type pageFetcher[T any] func(ctx context.Context, pos *keyset, backwards bool, limit int) ([]T, bool, error)

// paginate serves one page of a list and the Link header value that links
// its neighbours (nil when it has none).
func paginate[T any](ctx context.Context, s *Server, pr pageRequest, keyOf func(T) keyset, fetch pageFetcher[T]) ([]T, *string, error) {
	count := defaultPageSize
	if pr.count != nil {
		count = *pr.count
	}
	scope := pr.list + "|" + pr.teamID + "|" + pr.filters.Encode()
	var pos *cursor
	if pr.offset != nil {
		pos = &cursor{}
		if err := s.cursors.Decode(scope, *pr.offset, pos); err != nil {
			return nil, nil, errInvalid(pamapi.ErrorCauseLocationTypeQuery, "offset", "offset was not issued by this server for this list; follow the Link header")
		}
	}

	var (
		items            []T
		hasNext, hasPrev bool
		err              error
	)
	switch {
	case pos == nil:
		items, hasNext, err = fetch(ctx, nil, false, count)
	case pos.Backwards:
		items, hasPrev, err = fetch(ctx, pos.at(), true, count)
		hasNext = !pos.Edge
	default:
		items, hasNext, err = fetch(ctx, pos.at(), false, count)
		hasPrev = !pos.Edge
	}
	if err != nil {
		return nil, nil, err
	}

	var links []string
	if hasNext {
		// An empty page going backwards means nothing is left before its
		// position: what follows is the list from its start.
		after := cursor{Edge: true}
		if len(items) > 0 {
			after = cursor{keyset: keyOf(items[len(items)-1])}
		}
		l, err := s.pageLink(ctx, scope, after, count, pr.filters, "next")
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
	}
	if hasPrev {
		// An empty page going forwards means nothing is left after its
		// position, which may itself still be listed: go back from the end.
		before := cursor{Backwards: true, Edge: true}
		if len(items) > 0 {
			before = cursor{keyset: keyOf(items[0]), Backwards: true}
		}
		l, err := s.pageLink(ctx, scope, before, count, pr.filters, "prev")
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
	}
	if len(links) == 0 {
		return items, nil, nil
	}
	h := strings.Join(links, ", ")
	return items, &h, nil
}

// at is the position to fetch from, nil at an edge.
func (c *cursor) at() *keyset {
	if c.Edge {
		return nil
	}
	return &c.keyset
}

// pageLink builds the absolute URL of another page of the same list, with
// count and the filters carried into it.
func (s *Server) pageLink(ctx context.Context, scope string, c cursor, count int, filters url.Values, rel string) (string, error) {
	token, err := s.cursors.Encode(scope, c)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	for k, v := range filters {
		q[k] = v
	}
	q.Set("count", strconv.Itoa(count))
	q.Set("offset", token)
	u := requestURL(ctx)
	u.RawQuery = q.Encode()
	// Query values are percent-encoded, so the URI holds no ">" to escape.
	return "<" + u.String() + `>; rel="` + rel + `"`, nil
}

// sliceFetcher pages through items already in (name, id) order in memory.
func sliceFetcher[T any](items []T, keyOf func(T) keyset) pageFetcher[T] {
	return func(_ context.Context, pos *keyset, backwards bool, limit int) ([]T, bool, error) {
		var out []T
		if !backwards {
			for _, it := range items {
				if pos == nil || pos.before(keyOf(it)) {
					out = append(out, it)
				}
			}
			if len(out) > limit {
				return out[:limit], true, nil
			}
			return out, false, nil
		}
		for _, it := range items {
			if pos == nil || keyOf(it).before(*pos) {
				out = append(out, it)
			}
		}
		if len(out) > limit {
			return out[len(out)-limit:], true, nil
		}
		return out, false, nil
	}
}

// before reports whether k sorts before o in (name, id) order.
func (k keyset) before(o keyset) bool {
	return k.Name < o.Name || (k.Name == o.Name && k.ID < o.ID)
}

// addFilter sets a filter parameter when it is present and not its default.
func addFilter(v url.Values, name string, value *string) {
	if value != nil && *value != "" {
		v.Set(name, *value)
	}
}
