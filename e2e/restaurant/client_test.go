package restaurant_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/apistack/apistack/clients/restaurant"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/contract"
	restaurantserver "github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
)

// counting counts the requests to each path and validates every request and
// response against the spec.
type counting struct {
	next  http.RoundTripper
	mu    sync.Mutex
	paths map[string]int
	codes map[int]int
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths[r.URL.Path]++
	if err == nil {
		c.codes[resp.StatusCode]++
	}
	return resp, err
}

func newTransport(t *testing.T) *counting {
	rt, err := contract.ForAPI(contract.Restaurant, http.DefaultTransport,
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	return &counting{next: rt, paths: map[string]int{}, codes: map[int]int{}}
}

func newTestClient(t *testing.T, env *restauranttest.Env, tr http.RoundTripper) *restaurant.Client {
	c, err := restaurant.New(restaurant.Config{BaseURL: env.URL, ClientID: env.ClientID, ClientSecret: env.ClientSecret, Restaurant: env.Restaurant, Transport: tr})
	require.NoError(t, err)
	return c
}

const loginPath = "/authentication/v1/authentication/login"

func TestList_YieldsEveryMenuItemOnceAcrossPages(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{})
	doc := env.ImportDemo(t, 650)
	tr := newTransport(t)
	c := newTestClient(t, env, tr)

	seen := map[string]bool{}
	for item, err := range c.ListMenuItems(context.Background(), nil) {
		require.NoError(t, err)
		assert.False(t, seen[item.GUID], "yielded twice: %s", item.GUID)
		seen[item.GUID] = true
	}
	assert.Len(t, seen, len(doc.MenuItems))
	assert.Equal(t, 3, tr.paths["/config/v2/menuItems"], "pages of 300")
	assert.Equal(t, 1, tr.paths[loginPath], "the token is cached")
}

func TestList_StopsWhenTheCallerBreaks(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{})
	env.ImportDemo(t, 650)
	tr := newTransport(t)
	c := newTestClient(t, env, tr)
	n := 0
	for _, err := range c.ListMenuItems(context.Background(), nil) {
		require.NoError(t, err)
		if n++; n == 10 {
			break
		}
	}
	assert.Equal(t, 1, tr.paths["/config/v2/menuItems"])
}

func TestGet_ReturnsEveryResourceAndNotFoundAsAnError(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{})
	doc := env.ImportDemo(t, 120)
	c := newTestClient(t, env, newTransport(t))
	ctx := context.Background()

	menu, err := c.GetMenu(ctx, doc.Menus[0].Guid)
	require.NoError(t, err)
	assertSameJSON(t, doc.Menus[0], menu)
	table, err := c.GetTable(ctx, strings.ToUpper(doc.Tables[3].Guid))
	require.NoError(t, err)
	assertSameJSON(t, doc.Tables[3], table)
	tip, err := c.GetTipWithholding(ctx)
	require.NoError(t, err)
	assertSameJSON(t, doc.TipWithholding, tip)

	_, err = c.GetMenuItem(ctx, "00000000-0000-4000-8000-000000000000")
	assert.ErrorIs(t, err, &restaurant.Error{Key: restaurant.NotFound})
	var apiErr *restaurant.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)
	assert.NotEmpty(t, apiErr.RequestID)
}

func TestList_ARestaurantNotGrantedIsAnError(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{})
	c := newTestClient(t, env, newTransport(t)).ForRestaurant(env.Other)
	for _, err := range c.ListPrinters(context.Background(), nil) {
		assert.ErrorIs(t, err, &restaurant.Error{Key: restaurant.RestaurantNotGranted})
	}
}

func TestChanges_YieldsWhatWasCreatedOrModifiedAfterTheInstant(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	env := restauranttest.Start(t, restauranttest.Options{Clock: clk, Settings: restaurantserver.Settings{RatePerSecond: 1000}})
	doc := env.ImportDemo(t, 60)
	// since is a millisecond after the import: changes within since's own
	// millisecond may be yielded (Changes never misses one).
	clk.advance(time.Millisecond)
	since := clk.Now()
	clk.advance(time.Minute)

	doc.Menus[0].Name = "Renamed Menu"
	doc.Printers[1].Name = "Renamed Printer"
	_, err := env.Operator.Import(context.Background(), env.Restaurant, mustJSON(t, map[string]any{
		"menus": doc.Menus, "printers": doc.Printers,
	}))
	require.NoError(t, err)

	c := newTestClient(t, env, newTransport(t))
	var got []restaurant.Change
	for ch, err := range c.Changes(context.Background(), since) {
		require.NoError(t, err)
		got = append(got, ch)
	}
	require.Len(t, got, 2)
	assert.Equal(t, "menus", got[0].Resource)
	assert.Equal(t, doc.Menus[0].Guid, got[0].GUID)
	assert.Equal(t, "Renamed Menu", got[0].Entity.(restaurant.Menu).Name)
	assert.Equal(t, "printers", got[1].Resource)
	assert.Equal(t, "Renamed Printer", got[1].Entity.(restaurant.Printer).Name)
}

func TestClient_LogsInAgainWhenTheTokenExpires(t *testing.T) {
	clk := &fakeClock{now: time.Now()}
	env := restauranttest.Start(t, restauranttest.Options{Clock: clk, Settings: restaurantserver.Settings{TokenTTL: time.Hour}})
	env.ImportDemo(t, 10)
	tr := newTransport(t)
	c := newTestClient(t, env, tr)
	ctx := context.Background()

	_, err := c.GetPrinter(ctx, "00000000-0000-4000-8000-000000000000")
	require.ErrorIs(t, err, &restaurant.Error{Key: restaurant.NotFound})
	clk.advance(2 * time.Hour) // the server sees the token expired; the client does not know yet
	for _, err := range c.ListPrinters(ctx, nil) {
		require.NoError(t, err)
	}
	assert.Equal(t, 2, tr.paths[loginPath])
	assert.Equal(t, 1, tr.codes[http.StatusUnauthorized])
}

func TestClient_Retries429AfterRetryAfter(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{Settings: restaurantserver.Settings{RatePerSecond: 2}})
	env.ImportDemo(t, 10)
	tr := newTransport(t)
	c := newTestClient(t, env, tr)
	ctx := context.Background()
	start := time.Now()
	for range 4 {
		_, err := c.GetTipWithholding(ctx)
		require.NoError(t, err)
	}
	assert.GreaterOrEqual(t, tr.codes[http.StatusTooManyRequests], 1)
	assert.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond, "waited for Retry-After")
}

func TestClient_WrongCredentialsAreAnError(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{})
	c, err := restaurant.New(restaurant.Config{BaseURL: env.URL, ClientID: env.ClientID, ClientSecret: "wrong", Restaurant: env.Restaurant, Transport: newTransport(t)})
	require.NoError(t, err)
	_, err = c.GetTipWithholding(context.Background())
	assert.ErrorIs(t, err, &restaurant.Error{Key: restaurant.InvalidCredentials})
	assert.False(t, errors.Is(err, &restaurant.Error{Key: restaurant.NotFound}))
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func mustJSON(t *testing.T, v any) []byte {
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

func TestChanges_IncludesAChangeInTheSameMillisecondAsSince(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	env := restauranttest.Start(t, restauranttest.Options{Clock: clk, Settings: restaurantserver.Settings{RatePerSecond: 1000}})
	doc := env.ImportDemo(t, 20)
	clk.advance(time.Minute + 200*time.Microsecond)
	since := clk.Now()
	clk.advance(500 * time.Microsecond) // still the same millisecond as since

	doc.Printers[0].Name = "Renamed Printer"
	_, err := env.Operator.Import(context.Background(), env.Restaurant, mustJSON(t, map[string]any{"printers": doc.Printers}))
	require.NoError(t, err)

	c := newTestClient(t, env, newTransport(t))
	var got []string
	for ch, err := range c.Changes(context.Background(), since) {
		require.NoError(t, err)
		got = append(got, ch.GUID)
	}
	assert.Equal(t, []string{doc.Printers[0].Guid}, got, "a change after since in the same millisecond is not missed")
}

// assertSameJSON asserts that the client's own type got carries what the
// server's generated type want does: both encode to the same JSON.
func assertSameJSON(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(w), string(g))
}
