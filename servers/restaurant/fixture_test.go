package restaurant_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/restaurant"
)

// fixture is a restaurant server over real HTTP with two restaurants, A and
// B, and an API client granted A only.
type fixture struct {
	t        *testing.T
	srv      *restaurant.Server
	url      string
	clock    *clock.Fake
	a, b     string
	db       *sql.DB
	clientID string
	secret   string
	token    string
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newFixture starts a server with response validation on (a violation fails
// the test). Rate limits are high unless configure lowers them.
func newFixture(t *testing.T, configure ...func(*restaurant.Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t, testdb.Migrations(restaurant.API.Migrations()))
	clk := clock.NewFake(t0)
	cfg := restaurant.Config{
		Deps: restaurant.Deps{DB: db, Clock: clk, ValidateResponses: true, OnResponseViolation: func(r *http.Request, status int, err error) {
			t.Errorf("response %d to %s %s breaks the spec: %v", status, r.Method, r.URL, err)
		}},
		Settings: restaurant.Settings{RatePerSecond: 1 << 20, RatePerWindow: 1 << 30},
	}
	for _, f := range configure {
		f(&cfg)
	}
	srv, err := restaurant.New(ctx, cfg)
	require.NoError(t, err)
	h, err := srv.Handler()
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)

	a, err := srv.Operator().CreateRestaurant(ctx, "", "Restaurant A")
	require.NoError(t, err)
	b, err := srv.Operator().CreateRestaurant(ctx, "", "Restaurant B")
	require.NoError(t, err)
	creds, err := srv.Operator().CreateClient(ctx, "integration A", []string{a.GUID})
	require.NoError(t, err)
	f := &fixture{t: t, srv: srv, url: hs.URL, clock: clk, db: db, a: a.GUID, b: b.GUID, clientID: creds.ClientID, secret: creds.ClientSecret}
	f.token = f.login(creds.ClientID, creds.ClientSecret)
	return f
}

// transport validates every request and response on the client's side too.
func (f *fixture) transport(opts ...contract.Option) http.RoundTripper {
	opts = append(opts, contract.OnViolation(func(v *contract.Violation) { f.t.Errorf("%v", v) }))
	rt, err := contract.ForAPI(contract.Restaurant, http.DefaultTransport, opts...)
	require.NoError(f.t, err)
	return rt
}

func (f *fixture) login(id, secret string) string {
	f.t.Helper()
	c, err := restaurantapi.NewClientWithResponses(f.url, restaurantapi.WithHTTPClient(&http.Client{Transport: f.transport()}))
	require.NoError(f.t, err)
	r, err := c.LoginWithResponse(context.Background(), restaurantapi.LoginJSONRequestBody{
		ClientId: id, ClientSecret: secret, UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})
	require.NoError(f.t, err)
	require.Equal(f.t, http.StatusOK, r.StatusCode(), string(r.Body))
	return r.JSON200.Token.AccessToken
}

// client is the generated client with the fixture's bearer token.
func (f *fixture) client() *restaurantapi.ClientWithResponses {
	return f.clientWithToken(f.token)
}

func (f *fixture) clientWithToken(token string) *restaurantapi.ClientWithResponses {
	c, err := restaurantapi.NewClientWithResponses(f.url,
		restaurantapi.WithHTTPClient(&http.Client{Transport: f.transport()}),
		restaurantapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	require.NoError(f.t, err)
	return c
}

// raw sends a request the generated client would refuse to build (bad
// input); the response is still checked against the spec.
func (f *fixture) raw(path string, header http.Header) (int, restaurantapi.Error, http.Header) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.url+path, nil)
	require.NoError(f.t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := (&http.Client{Transport: f.transport(contract.WithoutRequestValidation())}).Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	var e restaurantapi.Error
	if resp.StatusCode >= 400 {
		require.NoError(f.t, json.Unmarshal(body, &e), string(body))
	}
	return resp.StatusCode, e, resp.Header
}

func (f *fixture) header(restaurant string) http.Header {
	return http.Header{"Authorization": {"Bearer " + f.token}, "Platform-Restaurant-External-Id": {restaurant}}
}

func (f *fixture) importDoc(restaurantGUID string, doc any) restaurant.ImportResult {
	f.t.Helper()
	return importDoc(f.t, f.srv, restaurantGUID, doc)
}

// importDoc imports doc, as JSON, into the restaurant restaurantGUID of srv.
func importDoc(t testing.TB, srv *restaurant.Server, restaurantGUID string, doc any) restaurant.ImportResult {
	t.Helper()
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	res, err := srv.Operator().Import(context.Background(), restaurantGUID, data)
	require.NoError(t, err)
	return res
}

// walk follows the page tokens of a list to the end, returning each page.
func (f *fixture) walk(op operation, restaurantGUID string, p listParams, between func(page int)) [][]json.RawMessage {
	f.t.Helper()
	c := f.client()
	var pages [][]json.RawMessage
	for {
		status, h, items, err := op.list(context.Background(), c, restaurantGUID, p)
		require.NoError(f.t, err)
		require.Equal(f.t, http.StatusOK, status)
		pages = append(pages, items)
		next := h.Get("Platform-Next-Page-Token")
		if next == "" {
			return pages
		}
		if between != nil {
			between(len(pages))
		}
		p.PageToken = &next
		p.Page = nil
		require.Less(f.t, len(pages), 10000, "the walk does not end")
	}
}

func opFor(t *testing.T, resource string) operation {
	for _, op := range operations {
		if op.resource == resource {
			return op
		}
	}
	t.Fatalf("no operation for %s", resource)
	return operation{}
}

func guidOf(t *testing.T, raw json.RawMessage) string {
	var v struct {
		Guid string `json:"guid"`
	}
	require.NoError(t, json.Unmarshal(raw, &v))
	return v.Guid
}
