// Package pam is the client other services import to call the PAM API. It
// wraps the generated client (gen/pamapi) with what every caller needs:
//
//   - authentication: a service-user key is exchanged for a bearer token on
//     first use; the token is refreshed shortly before it expires and once on
//     a 401, with one refresh shared by concurrent callers;
//   - retries: 429 waits until X-RateLimit-Retry-At plus a random jitter,
//     500/502/503/504 back off exponentially, all bounded by the context;
//   - pagination: list methods return iter.Seq2 iterators that follow the
//     Link header's rel="next" to the end;
//   - typed errors: every error answer is an *Error (errors.As), carrying the
//     status, the error name, the message and the causes.
package pam

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/apistack/apistack/clients/internal/bearer"
	"github.com/apistack/apistack/clients/internal/retry"
	"github.com/apistack/apistack/gen/pamapi"
)

// Config says where the PAM API is and which key to authenticate with.
type Config struct {
	// BaseURL is the API's root, e.g. http://127.0.0.1:8081.
	BaseURL string
	// Team is the tenant every call addresses.
	Team string
	// KeyID and KeySecret are a service user's API key.
	KeyID, KeySecret string
	// Transport sends the requests (http.DefaultTransport when nil). Tests put
	// clients/contract's validating transport here.
	Transport http.RoundTripper
	// MaxRetries bounds retries of one call (default 8).
	MaxRetries int
	// Timeout bounds one HTTP exchange, retries excluded (default 30s).
	Timeout time.Duration
}

// Client calls the PAM API for one team. It is safe for concurrent use.
type Client struct {
	team   string
	base   *url.URL
	tokens *bearer.Source
	http   *http.Client
	api    *pamapi.ClientWithResponses
}

// New returns a Client. It does not contact the server: the first call fetches
// the token.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" || cfg.Team == "" || cfg.KeyID == "" || cfg.KeySecret == "" {
		return nil, errors.New("pam: Config needs BaseURL, Team, KeyID and KeySecret")
	}
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("pam: BaseURL: %w", err)
	}
	next := cfg.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	// X-RateLimit-Retry-At says when the rate limit allows the next request;
	// it says nothing of when a 503 (maintenance) ends, so only a 429 waits
	// for it and a 503 backs off exponentially.
	rateLimitRetryAt := retry.UnixHeader("X-RateLimit-Retry-At")
	policy := retry.Policy{MaxRetries: cfg.MaxRetries, RetryAt: func(resp *http.Response) (time.Time, bool) {
		if resp.StatusCode != http.StatusTooManyRequests {
			return time.Time{}, false
		}
		return rateLimitRetryAt(resp)
	}}

	// Token requests retry too, but carry no bearer token.
	tokenHTTP := &http.Client{Transport: retry.Transport(next, policy), Timeout: cfg.Timeout}
	tokenAPI, err := pamapi.NewClientWithResponses(base.String(), pamapi.WithHTTPClient(tokenHTTP))
	if err != nil {
		return nil, fmt.Errorf("pam: %w", err)
	}
	c := &Client{team: cfg.Team, base: base}
	c.tokens = bearer.NewSource(func(ctx context.Context) (bearer.Token, error) {
		resp, err := tokenAPI.IssueServiceTokenWithResponse(ctx, cfg.Team,
			pamapi.IssueServiceTokenJSONRequestBody{KeyId: cfg.KeyID, KeySecret: cfg.KeySecret})
		if err != nil {
			return bearer.Token{}, fmt.Errorf("pam: issue service token: %w", err)
		}
		if resp.JSON200 == nil {
			return bearer.Token{}, fmt.Errorf("pam: issue service token: %w", parseError(resp.HTTPResponse, resp.Body))
		}
		return bearer.Token{Value: resp.JSON200.BearerToken, ExpiresAt: resp.JSON200.ExpiresAt}, nil
	})

	// Calls: retries outermost, then the token, then the wire, so a retried
	// call picks up a refreshed token.
	c.http = &http.Client{
		Transport: retry.Transport(&bearer.Transport{Source: c.tokens, Next: next}, policy),
		Timeout:   cfg.Timeout,
	}
	c.api, err = pamapi.NewClientWithResponses(base.String(), pamapi.WithHTTPClient(c.http))
	if err != nil {
		return nil, fmt.Errorf("pam: %w", err)
	}
	return c, nil
}

// Team returns the team the client addresses.
func (c *Client) Team() string { return c.team }

// Token returns the current bearer token, fetching or refreshing it when
// needed. Calls do this themselves; it is exported for callers that pass the
// token on to another tool.
func (c *Client) Token(ctx context.Context) (string, error) {
	return c.tokens.Token(ctx)
}

// API returns the generated client the methods are built on, authenticated
// and retrying like them, for operations this package does not wrap.
func (c *Client) API() *pamapi.ClientWithResponses { return c.api }

// setClock replaces the clock token expiry is judged by (tests).
func (c *Client) setClock(now func() time.Time) { c.tokens.SetClock(now) }
