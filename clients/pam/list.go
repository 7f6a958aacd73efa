package pam

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"

	"github.com/apistack/apistack/clients/internal/linkheader"
)

// ListOptions pages a list that has no filters.
type ListOptions struct {
	// PageSize is the number of items per request (1..1000); 0 means the
	// server's default (100).
	PageSize int
}

func (o *ListOptions) count() *int {
	if o == nil {
		return nil
	}
	return pageSize(o.PageSize)
}

func pageSize(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

// listAll is every list iterator: it sends the first request, yields the
// page's `list`, follows the Link header's rel="next" URL as the server gave
// it, and stops at the last page, at the first error (which it yields) or
// when the caller breaks.
func listAll[T any](ctx context.Context, c *Client, op string, first func(ctx context.Context) (*http.Response, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		resp, err := first(ctx)
		for {
			if err != nil {
				yield(zero, failed(op, err))
				return
			}
			page, next, perr := readPage[T](resp)
			if perr != nil {
				yield(zero, fmt.Errorf("pam: %s: %w", op, perr))
				return
			}
			for _, it := range page {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil {
				return
			}
			resp, err = c.get(ctx, next)
		}
	}
}

// readPage decodes one page of a list and finds its rel="next" link.
func readPage[T any](resp *http.Response) ([]T, *url.URL, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, parseError(resp, body)
	}
	var page struct {
		List []T `json:"list"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, nil, fmt.Errorf("decode page: %w", err)
	}
	next, ok, err := nextLink(resp)
	if err != nil || !ok {
		return page.List, nil, err
	}
	return page.List, next, nil
}

// get fetches a URL the server gave, with the client's token and retries.
func (c *Client) get(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	return c.http.Do(req)
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

// failed wraps a transport error of an operation.
func failed(op string, err error) error {
	return fmt.Errorf("pam: %s: %w", op, err)
}

// answerError wraps the *Error of an error answer.
func answerError(op string, resp *http.Response, body []byte) error {
	return fmt.Errorf("pam: %s: %w", op, parseError(resp, body))
}

// noContent is nil for a 2xx answer, else its *Error.
func noContent(op string, resp *http.Response, body []byte) error {
	if resp != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return answerError(op, resp, body)
}
