// Package tenantapi reaches the APIs of apistack the way a tenant does,
// through the generated clients (gen/*api) signed in with the tenant's
// credentials: a PAM service token, a fax API key, SigV4 signatures
// (protocol/sigv4), a restaurant login. It is the servers' tests' consumer:
// server packages may not import the ergonomic clients (clients/), whose
// retries would also hide what a server answered. A call sends one request,
// never retried, on a connection of its own, and answers the decoded body, an
// *AnswerError holding what the server answered instead, or the transport's
// error when no answer came.
package tenantapi

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/protocol/sigv4"
)

// oneShot carries each request on a connection of its own: net/http sends
// an idempotent request again, unasked, when the server closed the reused
// connection it went on, and a dropped request must be seen as dropped.
var oneShot = &http.Transport{DisableKeepAlives: true}

// Option changes how a client sends its requests.
type Option func(*options)

type options struct{ transport http.RoundTripper }

// WithTransport sends the requests through rt (a contract check, say)
// instead of a connection of their own each.
func WithTransport(rt http.RoundTripper) Option { return func(o *options) { o.transport = rt } }

func optionsOf(opts []Option) options {
	o := options{transport: oneShot}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// AnswerError is a server's answer other than the operation's success.
type AnswerError struct {
	// Op is the operation called.
	Op string
	// Status, Header and Body are the answer's.
	Status int
	Header http.Header
	Body   []byte
}

// Error names the operation, the status and the start of the body.
func (e *AnswerError) Error() string {
	return fmt.Sprintf("%s: %d %.300s", e.Op, e.Status, e.Body)
}

// Status is the HTTP status a call answered when it failed: 0 when it did
// not fail, -1 when no answer came.
func Status(err error) int {
	var ae *AnswerError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ae):
		return ae.Status
	}
	return -1
}

// refused is nil when resp (a generated *XxxResponse) answered want; an
// *AnswerError when it answered anything else; the transport's error when
// no answer came.
func refused(op string, resp any, err error, want int) error {
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	v := reflect.ValueOf(resp).Elem()
	hr := v.FieldByName("HTTPResponse").Interface().(*http.Response)
	if hr.StatusCode == want {
		return nil
	}
	return &AnswerError{Op: op, Status: hr.StatusCode, Header: hr.Header, Body: v.FieldByName("Body").Bytes()}
}

// tokenTransport sends a bearer token it gets from issue on first use, and
// gets a new one once when an answer is 401 (the token expired on the
// sandbox's clock).
type tokenTransport struct {
	issue func(ctx context.Context) (string, error)
	next  http.RoundTripper
	mu    sync.Mutex
	token string
}

// current is the token, issued anew when it is still stale (the one a 401
// answered).
func (tt *tokenTransport) current(ctx context.Context, stale string) (string, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.token == "" || tt.token == stale {
		tok, err := tt.issue(ctx)
		if err != nil {
			return "", err
		}
		tt.token = tok
	}
	return tt.token, nil
}

func (tt *tokenTransport) send(r *http.Request, token string) (*http.Response, error) {
	out := r.Clone(r.Context())
	if r.GetBody != nil {
		body, err := r.GetBody()
		if err != nil {
			return nil, err
		}
		out.Body = body
	}
	out.Header.Set("Authorization", "Bearer "+token)
	return tt.next.RoundTrip(out)
}

func (tt *tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := tt.current(r.Context(), "")
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	resp, err := tt.send(r, tok)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || (r.Body != nil && r.GetBody == nil) {
		return resp, err
	}
	_ = resp.Body.Close()
	if tok, err = tt.current(r.Context(), tok); err != nil {
		return nil, fmt.Errorf("sign in again: %w", err)
	}
	return tt.send(r, tok)
}

// PAMClient is the PAM API of one team, on a service user's key.
type PAMClient struct {
	api    *pamapi.ClientWithResponses
	team   string
	tokens *tokenTransport
}

// NewPAM is the PAM API of team on a service user's key.
func NewPAM(t testing.TB, baseURL, team, keyID, keySecret string, opts ...Option) *PAMClient {
	t.Helper()
	o := optionsOf(opts)
	tokens, err := pamapi.NewClientWithResponses(baseURL, pamapi.WithHTTPClient(&http.Client{Transport: o.transport}))
	require.NoError(t, err)
	tt := &tokenTransport{next: o.transport, issue: func(ctx context.Context) (string, error) {
		resp, err := tokens.IssueServiceTokenWithResponse(ctx, team, pamapi.IssueServiceTokenJSONRequestBody{KeyId: keyID, KeySecret: keySecret})
		if err := refused("IssueServiceToken", resp, err, http.StatusOK); err != nil {
			return "", err
		}
		return resp.JSON200.BearerToken, nil
	}}
	api, err := pamapi.NewClientWithResponses(baseURL, pamapi.WithHTTPClient(&http.Client{Transport: tt}))
	require.NoError(t, err)
	return &PAMClient{api: api, team: team, tokens: tt}
}

// Token is the bearer token the calls send, issued when none is yet.
func (p *PAMClient) Token(ctx context.Context) (string, error) { return p.tokens.current(ctx, "") }

// API is the generated client, signed in, for calls on any team.
func (p *PAMClient) API() *pamapi.ClientWithResponses { return p.api }

// CreateGroup creates a group holding roles.
func (p *PAMClient) CreateGroup(ctx context.Context, name string, roles ...pamapi.Role) (*pamapi.Group, error) {
	if roles == nil {
		roles = []pamapi.Role{}
	}
	resp, err := p.api.CreateGroupWithResponse(ctx, p.team, pamapi.CreateGroupJSONRequestBody{Name: name, Roles: roles})
	if err := refused("CreateGroup", resp, err, http.StatusCreated); err != nil {
		return nil, err
	}
	return resp.JSON201, nil
}

// GetGroup reads a group.
func (p *PAMClient) GetGroup(ctx context.Context, name string) (*pamapi.Group, error) {
	resp, err := p.api.GetGroupWithResponse(ctx, p.team, name)
	if err := refused("GetGroup", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// pamPage is the size of the pages the lists walk.
const pamPage = 100

// nextOffset is the offset of the next page a PAM list's Link header
// names ("" on the last page).
func nextOffset(h http.Header) (string, error) {
	for _, link := range h.Values("Link") {
		for _, part := range strings.Split(link, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
			if !ok || !strings.Contains(params, `rel="next"`) {
				continue
			}
			u, err := url.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
			if err != nil {
				return "", fmt.Errorf("link %q: %w", link, err)
			}
			return u.Query().Get("offset"), nil
		}
	}
	return "", nil
}

// walk yields every item of a paged list: page answers one page and the
// next page's token ("" on the last).
func walk[T any](page func(next string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		next := ""
		for {
			items, after, err := page(next)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if after == "" {
				return
			}
			next = after
		}
	}
}

// ListGroups yields every live group of the team, following the Link
// header (params nil: pages of pamPage).
func (p *PAMClient) ListGroups(ctx context.Context, params *pamapi.ListGroupsParams) iter.Seq2[pamapi.Group, error] {
	if params == nil {
		params = &pamapi.ListGroupsParams{Count: ptr(pamPage)}
	}
	return walk(func(next string) ([]pamapi.Group, string, error) {
		if next != "" {
			params.Offset = &next
		}
		resp, err := p.api.ListGroupsWithResponse(ctx, p.team, params)
		if err := refused("ListGroups", resp, err, http.StatusOK); err != nil {
			return nil, "", err
		}
		after, err := nextOffset(resp.HTTPResponse.Header)
		return resp.JSON200.List, after, err
	})
}

// ListGroupMembers yields every member of a group, page by page.
func (p *PAMClient) ListGroupMembers(ctx context.Context, group string, params *pamapi.ListGroupMembersParams) iter.Seq2[pamapi.User, error] {
	if params == nil {
		params = &pamapi.ListGroupMembersParams{Count: ptr(pamPage)}
	}
	return walk(func(next string) ([]pamapi.User, string, error) {
		if next != "" {
			params.Offset = &next
		}
		resp, err := p.api.ListGroupMembersWithResponse(ctx, p.team, group, params)
		if err := refused("ListGroupMembers", resp, err, http.StatusOK); err != nil {
			return nil, "", err
		}
		after, err := nextOffset(resp.HTTPResponse.Header)
		return resp.JSON200.List, after, err
	})
}

// GetUser reads a user.
func (p *PAMClient) GetUser(ctx context.Context, name string) (*pamapi.User, error) {
	resp, err := p.api.GetUserWithResponse(ctx, p.team, name)
	if err := refused("GetUser", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// GetServiceUser reads a service user.
func (p *PAMClient) GetServiceUser(ctx context.Context, name string) (*pamapi.ServiceUser, error) {
	resp, err := p.api.GetServiceUserWithResponse(ctx, p.team, name)
	if err := refused("GetServiceUser", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// GetCurrentUser reads the user the key is of.
func (p *PAMClient) GetCurrentUser(ctx context.Context) (*pamapi.CurrentUser, error) {
	resp, err := p.api.GetCurrentUserWithResponse(ctx, p.team)
	if err := refused("GetCurrentUser", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// FaxClient is the fax API on an account's API key.
type FaxClient struct{ api *faxapi.ClientWithResponses }

// NewFax is the fax API of the account whose API key is key.
func NewFax(t testing.TB, baseURL, key string, opts ...Option) *FaxClient {
	t.Helper()
	api, err := faxapi.NewClientWithResponses(baseURL, faxapi.WithHTTPClient(&http.Client{Transport: optionsOf(opts).transport}), faxapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	require.NoError(t, err)
	return &FaxClient{api: api}
}

// Fax is a fax as the API answers it, its id also under the name the tests
// use (ID).
type Fax struct {
	faxapi.Fax
	ID uuid.UUID
}

func faxOf(f faxapi.Fax) *Fax { return &Fax{Fax: f, ID: f.Id} }

// API is the generated client, signed in, for calls the methods leave out.
func (f *FaxClient) API() *faxapi.ClientWithResponses { return f.api }

// SendFax sends a fax.
func (f *FaxClient) SendFax(ctx context.Context, body faxapi.SendFaxJSONRequestBody) (*Fax, error) {
	resp, err := f.api.SendFaxWithResponse(ctx, body)
	if err := refused("SendFax", resp, err, http.StatusAccepted); err != nil {
		return nil, err
	}
	return faxOf(resp.JSON202.Data), nil
}

// GetFax reads a fax.
func (f *FaxClient) GetFax(ctx context.Context, id string) (*Fax, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("GetFax: %w", err)
	}
	resp, err := f.api.GetFaxWithResponse(ctx, uid)
	if err := refused("GetFax", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return faxOf(resp.JSON200.Data), nil
}

// ListFaxes yields every fax of the account, page by page (params nil:
// pages of 50).
func (f *FaxClient) ListFaxes(ctx context.Context, params *faxapi.ListFaxesParams) iter.Seq2[Fax, error] {
	if params == nil {
		params = &faxapi.ListFaxesParams{PageSize: ptr(50)}
	}
	return walk(func(next string) ([]Fax, string, error) {
		if next != "" {
			n, err := strconv.Atoi(next)
			if err != nil {
				return nil, "", err
			}
			params.PageNumber = &n
		}
		resp, err := f.api.ListFaxesWithResponse(ctx, params)
		if err := refused("ListFaxes", resp, err, http.StatusOK); err != nil {
			return nil, "", err
		}
		out := make([]Fax, 0, len(resp.JSON200.Data))
		for _, it := range resp.JSON200.Data {
			out = append(out, *faxOf(it))
		}
		after := ""
		if m := resp.JSON200.Meta; m.PageNumber < m.TotalPages {
			after = strconv.Itoa(m.PageNumber + 1)
		}
		return out, after, nil
	})
}

// GetApplication reads a fax application.
func (f *FaxClient) GetApplication(ctx context.Context, id string) (*faxapi.FaxApplication, error) {
	resp, err := f.api.GetFaxApplicationWithResponse(ctx, id)
	if err := refused("GetFaxApplication", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return &resp.JSON200.Data, nil
}

// SetWebhookURL points the application id's webhooks at url.
func (f *FaxClient) SetWebhookURL(ctx context.Context, id, url string) error {
	_, err := f.UpdateApplication(ctx, id, faxapi.UpdateFaxApplicationJSONRequestBody{WebhookUrl: &url})
	return err
}

// UpdateApplication changes a fax application.
func (f *FaxClient) UpdateApplication(ctx context.Context, id string, body faxapi.UpdateFaxApplicationJSONRequestBody) (*faxapi.FaxApplication, error) {
	resp, err := f.api.UpdateFaxApplicationWithResponse(ctx, id, body)
	if err := refused("UpdateFaxApplication", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return &resp.JSON200.Data, nil
}

// StorageClient is the object-storage API on an access key, signing with the
// stack's clock.
type StorageClient struct {
	api *storageapi.ClientWithResponses
}

// NewStorage is the object-storage API on an access key, signing at now's
// time.
func NewStorage(t testing.TB, endpoint, region, keyID, secret string, now func() time.Time, opts ...Option) *StorageClient {
	t.Helper()
	signer := &sigv4.Transport{
		Scheme:      sigv4.Cloud4,
		Credentials: sigv4.Credentials{AccessKeyID: keyID, SecretAccessKey: secret},
		Region:      region, Service: "s3", Now: now, Next: optionsOf(opts).transport,
	}
	api, err := storageapi.NewClientWithResponses(endpoint, storageapi.WithHTTPClient(&http.Client{Transport: signer}))
	require.NoError(t, err)
	return &StorageClient{api: api}
}

// GetLifecycle reads a bucket's lifecycle configuration.
func (s *StorageClient) GetLifecycle(ctx context.Context, bucket string) (*storageapi.LifecycleConfiguration, error) {
	resp, err := s.api.GetLifecycleWithResponse(ctx, bucket, &storageapi.GetLifecycleParams{})
	if err := refused("GetLifecycle", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return resp.XML200, nil
}

// GetLifecycleXML reads a bucket's lifecycle configuration as the server
// wrote it.
func (s *StorageClient) GetLifecycleXML(ctx context.Context, bucket string) (string, error) {
	resp, err := s.api.GetLifecycleWithResponse(ctx, bucket, &storageapi.GetLifecycleParams{})
	if err := refused("GetLifecycle", resp, err, http.StatusOK); err != nil {
		return "", err
	}
	return string(resp.Body), nil
}

// PutLifecycle sets a bucket's lifecycle configuration (an XML document).
func (s *StorageClient) PutLifecycle(ctx context.Context, bucket, doc string) error {
	resp, err := s.api.PutLifecycleWithBodyWithResponse(ctx, bucket, &storageapi.PutLifecycleParams{}, "application/xml", strings.NewReader(doc))
	return refused("PutLifecycle", resp, err, http.StatusOK)
}

// DeleteLifecycle removes a bucket's lifecycle configuration.
func (s *StorageClient) DeleteLifecycle(ctx context.Context, bucket string) error {
	resp, err := s.api.DeleteLifecycleWithResponse(ctx, bucket, &storageapi.DeleteLifecycleParams{})
	return refused("DeleteLifecycle", resp, err, http.StatusNoContent)
}

// RestaurantClient is the restaurant configuration API of one restaurant, on
// an API client's login.
type RestaurantClient struct {
	api        *restaurantapi.ClientWithResponses
	restaurant string
}

// NewRestaurant is the restaurant configuration API of the restaurant guid,
// on an API client's login.
func NewRestaurant(t testing.TB, baseURL, clientID, clientSecret, guid string, opts ...Option) *RestaurantClient {
	t.Helper()
	o := optionsOf(opts)
	login, err := restaurantapi.NewClientWithResponses(baseURL, restaurantapi.WithHTTPClient(&http.Client{Transport: o.transport}))
	require.NoError(t, err)
	tt := &tokenTransport{next: o.transport, issue: func(ctx context.Context) (string, error) {
		resp, err := login.LoginWithResponse(ctx, restaurantapi.LoginJSONRequestBody{ClientId: clientID, ClientSecret: clientSecret,
			UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})
		if err := refused("Login", resp, err, http.StatusOK); err != nil {
			return "", err
		}
		return resp.JSON200.Token.AccessToken, nil
	}}
	api, err := restaurantapi.NewClientWithResponses(baseURL, restaurantapi.WithHTTPClient(&http.Client{Transport: tt}))
	require.NoError(t, err)
	return &RestaurantClient{api: api, restaurant: strings.ToLower(guid)}
}

// ForRestaurant reads another restaurant with the same login.
func (r *RestaurantClient) ForRestaurant(guid string) *RestaurantClient {
	return &RestaurantClient{api: r.api, restaurant: strings.ToLower(guid)}
}

// GetTipWithholding reads the restaurant's tip withholding.
func (r *RestaurantClient) GetTipWithholding(ctx context.Context) (*restaurantapi.TipWithholding, error) {
	resp, err := r.api.GetTipWithholdingWithResponse(ctx, &restaurantapi.GetTipWithholdingParams{PlatformRestaurantExternalID: r.restaurant})
	if err := refused("GetTipWithholding", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// GetMenuItem reads a menu item.
func (r *RestaurantClient) GetMenuItem(ctx context.Context, guid string) (*restaurantapi.MenuItem, error) {
	resp, err := r.api.GetMenuItemWithResponse(ctx, guid, &restaurantapi.GetMenuItemParams{PlatformRestaurantExternalID: r.restaurant})
	if err := refused("GetMenuItem", resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

// ListMenuItems yields every menu item, following
// Platform-Next-Page-Token.
func (r *RestaurantClient) ListMenuItems(ctx context.Context, params *restaurantapi.ListMenuItemsParams) iter.Seq2[restaurantapi.MenuItem, error] {
	if params == nil {
		params = &restaurantapi.ListMenuItemsParams{}
	}
	params.PlatformRestaurantExternalID = r.restaurant
	return walk(func(next string) ([]restaurantapi.MenuItem, string, error) {
		if next != "" {
			params.PageToken = &next
		}
		resp, err := r.api.ListMenuItemsWithResponse(ctx, params)
		if err := refused("ListMenuItems", resp, err, http.StatusOK); err != nil {
			return nil, "", err
		}
		return *resp.JSON200, resp.HTTPResponse.Header.Get("Platform-Next-Page-Token"), nil
	})
}

func ptr[T any](v T) *T { return &v }
