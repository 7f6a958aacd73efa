// Package restaurant is the client of the restaurant configuration API: it
// logs in with an API client's credentials (caching the token and logging in
// again before it expires), selects a restaurant, iterates over any list
// following the page tokens (List<Resource> methods, such as ListMenuItems),
// reads one entity of any resource (Get<Entity> methods, such as
// GetMenuItem), yields what changed since an instant (Changes), and retries
// requests refused with 429, waiting as long as Retry-After says (the shared
// clients.RetryPolicy).
package restaurant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apistack/apistack/clients"
	"github.com/apistack/apistack/clients/internal/bearer"
	"github.com/apistack/apistack/clients/internal/retry"
	"github.com/apistack/apistack/gen/restaurantapi"
)

// Page sizes of the API.
const (
	DefaultPageSize = 100
	MaxPageSize     = 300
)

// headerRestaurant selects the restaurant of a request.
const headerRestaurant = "Platform-Restaurant-External-ID"

// Config configures a Client.
type Config struct {
	// BaseURL is the server, such as http://127.0.0.1:8084 (without /config/v2).
	BaseURL string
	// ClientID and ClientSecret are the API client's credentials.
	ClientID, ClientSecret string
	// Restaurant is the GUID of the restaurant the calls read; ForRestaurant
	// returns a Client for another one.
	Restaurant string
	// Transport carries the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Retry is how requests are retried (429 waits as long as Retry-After
	// says, up to MaxWait; 5xx back off) and how long one attempt may take;
	// the zero value is the documented default. A call's overall bound is its
	// context.
	Retry clients.RetryPolicy
	// PageSize is the page size the List methods ask for; 0 means 300, the maximum.
	PageSize int
}

// Client reads one restaurant's configuration. It is safe for concurrent use.
type Client struct {
	base       string
	restaurant string
	pageSize   int
	tokens     *bearer.Source
	http       *http.Client
	api        *restaurantapi.ClientWithResponses
	bufs       *sync.Pool
}

// New returns a Client. It logs in at the first call, not here.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" || cfg.ClientID == "" || cfg.ClientSecret == "" || cfg.Restaurant == "" {
		return nil, errors.New("restaurant: Config needs BaseURL, ClientID, ClientSecret and Restaurant")
	}
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("restaurant: BaseURL: %w", err)
	}
	next := cfg.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = MaxPageSize
	}
	if cfg.PageSize < 1 || cfg.PageSize > MaxPageSize {
		return nil, fmt.Errorf("restaurant: PageSize %d is not in 1..%d", cfg.PageSize, MaxPageSize)
	}
	policy := retry.Options{RetryPolicy: cfg.Retry}

	loginHTTP := retry.HTTPClient(next, policy)
	loginAPI, err := restaurantapi.NewClientWithResponses(base.String(), restaurantapi.WithHTTPClient(loginHTTP))
	if err != nil {
		return nil, fmt.Errorf("restaurant: %w", err)
	}
	c := &Client{
		base: base.String(), restaurant: strings.ToLower(cfg.Restaurant), pageSize: cfg.PageSize,
		bufs: &sync.Pool{New: func() any { return new(bytes.Buffer) }},
	}
	c.tokens = bearer.NewSource(func(ctx context.Context) (bearer.Token, error) {
		issued := time.Now()
		resp, err := loginAPI.LoginWithResponse(ctx, restaurantapi.LoginJSONRequestBody{
			ClientId: cfg.ClientID, ClientSecret: cfg.ClientSecret,
			UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT,
		})
		if err != nil {
			return bearer.Token{}, fmt.Errorf("log in: %w", err)
		}
		if resp.JSON200 == nil {
			return bearer.Token{}, fmt.Errorf("log in: %w", parseError(resp.HTTPResponse, resp.Body))
		}
		t := resp.JSON200.Token
		return bearer.Token{Value: t.AccessToken, ExpiresAt: issued.Add(time.Duration(t.ExpiresIn) * time.Second)}, nil
	})
	c.http = retry.HTTPClient(&bearer.Transport{Source: c.tokens, Next: next}, policy)
	c.api, err = restaurantapi.NewClientWithResponses(base.String(), restaurantapi.WithHTTPClient(c.http),
		restaurantapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set(headerRestaurant, c.restaurant)
			return nil
		}))
	if err != nil {
		return nil, fmt.Errorf("restaurant: %w", err)
	}
	return c, nil
}

// ForRestaurant returns a Client reading another restaurant with the same
// credentials and token.
func (c *Client) ForRestaurant(guid string) *Client {
	d := *c
	d.restaurant = strings.ToLower(guid)
	api, err := restaurantapi.NewClientWithResponses(c.base, restaurantapi.WithHTTPClient(c.http),
		restaurantapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set(headerRestaurant, d.restaurant)
			return nil
		}))
	if err == nil { // the base URL parsed in New, so it parses here
		d.api = api
	}
	return &d
}

// Restaurant returns the GUID of the restaurant the Client reads.
func (c *Client) Restaurant() string { return c.restaurant }

// Token returns a valid bearer token, logging in when needed.
func (c *Client) Token(ctx context.Context) (string, error) { return c.tokens.Token(ctx) }

// API returns the generated client beneath, with login, retries and the
// restaurant header applied, for calls this package does not wrap.
func (c *Client) API() *restaurantapi.ClientWithResponses { return c.api }

// Resource is one resource type of the configuration, read as T.
type Resource[T any] struct {
	path string
	guid func(*T) string
}

// Name returns the resource's name as it appears in its path ("menuItems").
func (r Resource[T]) Name() string { return r.path }

// ListOptions narrows a List.
type ListOptions struct {
	// LastModified, when not zero, keeps only the entities created or
	// modified after it.
	LastModified time.Time
}

// list iterates over every entity of a resource of the client's restaurant,
// one page at a time, following Platform-Next-Page-Token to the end. Only one
// page is held at a time. The walk stays correct while the data changes: an
// entity present for the whole walk is yielded exactly once. Iteration stops
// at the first error, which is yielded.
func list[T any](ctx context.Context, c *Client, r Resource[T], opts *ListOptions) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		q := url.Values{}
		q.Set("pageSize", strconv.Itoa(c.pageSize))
		if opts != nil && !opts.LastModified.IsZero() {
			q.Set("lastModified", FormatTimestamp(opts.LastModified))
		}
		for {
			var page []T
			next, err := c.getJSON(ctx, "/config/v2/"+r.path, q, &page)
			if err != nil {
				var zero T
				yield(zero, fmt.Errorf("restaurant: list %s: %w", r.path, err))
				return
			}
			for _, v := range page {
				if !yield(v, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			q.Set("pageToken", next)
		}
	}
}

// get returns one entity of a resource of the client's restaurant; the error
// is an *Error with Key NOT_FOUND when it does not exist (or was archived or
// removed).
func get[T any](ctx context.Context, c *Client, r Resource[T], guid string) (*T, error) {
	var v T
	if _, err := c.getJSON(ctx, "/config/v2/"+r.path+"/"+url.PathEscape(guid), nil, &v); err != nil {
		return nil, fmt.Errorf("restaurant: get %s %s: %w", r.path, guid, err)
	}
	return &v, nil
}

// GetTipWithholding returns the restaurant's tip withholding setting.
func (c *Client) GetTipWithholding(ctx context.Context) (*TipWithholding, error) {
	var v TipWithholding
	if _, err := c.getJSON(ctx, "/config/v2/tipWithholding", nil, &v); err != nil {
		return nil, fmt.Errorf("restaurant: get tip withholding: %w", err)
	}
	return &v, nil
}

// Change is one entity created or modified after the instant given to Changes.
type Change struct {
	// Resource names the entity's resource ("menuItems").
	Resource string
	// GUID is the entity's GUID.
	GUID string
	// Entity is the entity as this package's type of its resource (MenuItem,
	// ...), a value, not a pointer.
	Entity any
}

// Changes yields every entity of every list resource created or modified
// after since, resource by resource. Archived and removed entities are never
// returned by the API, so they do not appear. To poll, pass the instant the
// previous Changes began (not when it ended), so nothing modified during a
// walk is missed.
//
// The API's lastModified counts whole milliseconds and keeps what changed
// strictly after one, so Changes asks from the millisecond before since's:
// a change later in since's own millisecond is never missed, and one earlier
// in that millisecond may be yielded too.
func (c *Client) Changes(ctx context.Context, since time.Time) iter.Seq2[Change, error] {
	since = since.Truncate(time.Millisecond).Add(-time.Millisecond)
	return func(yield func(Change, error) bool) {
		for _, r := range all {
			for ch, err := range r.changes(ctx, c, since) {
				if !yield(ch, err) || err != nil {
					return
				}
			}
		}
	}
}

// changeLister is what Changes needs of every Resource, whatever its T.
type changeLister interface {
	changes(ctx context.Context, c *Client, since time.Time) iter.Seq2[Change, error]
}

func (r Resource[T]) changes(ctx context.Context, c *Client, since time.Time) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		for v, err := range list(ctx, c, r, &ListOptions{LastModified: since}) {
			if err != nil {
				yield(Change{Resource: r.path}, err)
				return
			}
			if !yield(Change{Resource: r.path, GUID: r.guid(&v), Entity: v}, nil) {
				return
			}
		}
	}
}

// getJSON GETs path with query q, decodes a 200 answer into out and returns
// the next page token (empty on the last page).
func (c *Client) getJSON(ctx context.Context, path string, q url.Values, out any) (string, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set(headerRestaurant, c.restaurant)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	buf := c.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer c.bufs.Put(buf)
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return "", fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", parseError(resp, buf.Bytes())
	}
	if err := json.Unmarshal(buf.Bytes(), out); err != nil {
		return "", fmt.Errorf("decode response: %w", err)
	}
	return resp.Header.Get("Platform-Next-Page-Token"), nil
}

// FormatTimestamp formats t as the API takes instants
// (2015-12-01T00:00:00.000+0000).
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000-0700")
}
