// Package pam is the client other services import to call the PAM API. It
// wraps the generated client (gen/pamapi) with what every caller needs:
//
//   - authentication: a service-user key is exchanged for a bearer token on
//     first use; the token is refreshed shortly before it expires and once on
//     a 401, with one refresh shared by concurrent callers;
//   - retries (clients.RetryPolicy, shared by the four clients): 429 waits
//     until X-RateLimit-Retry-At (up to MaxWait), 500/502/503/504 back off
//     exponentially, each attempt has its own timeout and the call is bounded
//     by its context; retries that run out end in a *clients.RetryError
//     holding the last answer's *Error;
//   - pagination: list methods return iter.Seq2 iterators that follow the
//     Link header's rel="next" to the end;
//   - typed errors: every error answer is an *Error (errors.As), carrying the
//     status, the error name, the message and the causes; it implements
//     clients.Error like the other clients' errors.
package pam

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/apistack/apistack/clients"
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
	// Retry is how calls are retried and how long one attempt may take; the
	// zero value is the documented default. A call's overall bound is its
	// context.
	Retry clients.RetryPolicy
	// Now is the clock the token's expiry is judged by; nil means time.Now.
	Now func() time.Time
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
	// X-RateLimit-Retry-At says when the rate limit allows the next request;
	// it says nothing of when a 503 (maintenance) ends, so only a 429 waits
	// for it (the shared policy reads it on 429 only) and a 503 backs off
	// exponentially.
	policy := retry.Options{RetryPolicy: cfg.Retry}

	// Token requests retry too, but carry no bearer token.
	tokenHTTP := retry.HTTPClient(next, policy)
	tokenAPI, err := pamapi.NewClientWithResponses(base.String(), pamapi.WithHTTPClient(tokenHTTP))
	if err != nil {
		return nil, fmt.Errorf("pam: %w", err)
	}
	c := &Client{team: cfg.Team, base: base}
	c.tokens = bearer.NewSource(func(ctx context.Context) (bearer.Token, error) {
		resp, err := tokenAPI.IssueServiceTokenWithResponse(ctx, cfg.Team,
			pamapi.IssueServiceTokenJSONRequestBody{KeyId: cfg.KeyID, KeySecret: cfg.KeySecret})
		if err != nil {
			return bearer.Token{}, fmt.Errorf("issue service token: %w", err)
		}
		if resp.JSON200 == nil {
			return bearer.Token{}, fmt.Errorf("issue service token: %w", parseError(resp.HTTPResponse, resp.Body))
		}
		return bearer.Token{Value: resp.JSON200.BearerToken, ExpiresAt: resp.JSON200.ExpiresAt}, nil
	})
	if cfg.Now != nil {
		c.tokens.SetClock(cfg.Now)
	}

	// Calls: retries outermost, then the token, then the wire, so a retried
	// call picks up a refreshed token.
	c.http = retry.HTTPClient(&bearer.Transport{Source: c.tokens, Next: next}, policy)
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
