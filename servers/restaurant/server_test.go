package restaurant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/gen/restaurantserver"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/stalledbody"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
)

// documentSections returns the demo document's entities per resource, as JSON.
func documentSections(t *testing.T, d *restaurant.Document) map[string][]json.RawMessage {
	data, err := json.Marshal(d)
	require.NoError(t, err)
	var sections map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &sections))
	out := map[string][]json.RawMessage{}
	for k, v := range sections {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			items = []json.RawMessage{v}
		}
		out[k] = items
	}
	return out
}

// The server exports the generated handlers, Handler and its operator's and
// console's views only: what the admin API, the console and the tests need
// goes through those views, so the server's own methods stay free to change
// without another package coming to depend on them.
func TestServer_ExportsItsHandlersAndLifecycleOnly(t *testing.T) {
	testkit.ExportsOnly(t, &restaurant.Server{}, (*restaurantserver.StrictServerInterface)(nil), "Handler", "Operator", "Console")
}

func TestEveryOperation_AnswersWhatWasImported(t *testing.T) {
	f := newFixture(t)
	doc := restaurant.Demo(restaurant.DemoOptions{MenuItems: 120, Seed: 7})
	f.importDoc(f.a, doc)
	want := documentSections(t, doc)
	ctx := context.Background()
	c := f.client()
	size := restaurant.MaxPageSize

	for _, op := range operations {
		t.Run(op.resource, func(t *testing.T) {
			status, h, items, err := op.list(ctx, c, f.a, listParams{PageSize: &size})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			assert.Empty(t, h.Get("Platform-Next-Page-Token"))
			require.NotEmpty(t, items, "the demo fills every resource")
			require.Len(t, items, len(want[op.resource]))
			for i := range items {
				assert.JSONEq(t, string(want[op.resource][i]), string(items[i]))
			}
			status, one, err := op.get(ctx, c, f.a, guidOf(t, items[0]))
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			assert.JSONEq(t, string(items[0]), string(one))
		})
	}

	r, err := c.GetTipWithholdingWithResponse(ctx, &restaurantapi.GetTipWithholdingParams{PlatformRestaurantExternalID: f.a})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.StatusCode())
	got, _ := json.Marshal(r.JSON200)
	assert.JSONEq(t, string(want["tipWithholding"][0]), string(got))
}

func TestGet_UnknownArchivedAndRemovedEntitiesAreNotFound(t *testing.T) {
	f := newFixture(t)
	f.importDoc(f.a, restaurant.Document{MenuItems: restaurant.PlainItems("Dish", 3)})
	ctx := context.Background()
	require.NoError(t, f.srv.Operator().Archive(ctx, f.a, "menuItems", "00000000-0000-4000-8000-000000000001"))
	require.NoError(t, f.srv.Operator().Remove(ctx, f.a, "menuItems", "00000000-0000-4000-8000-000000000002"))
	op := opFor(t, "menuItems")
	for _, guid := range []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000009"} {
		status, _, err := op.get(ctx, f.client(), f.a, guid)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, status, guid)
	}
	_, _, items, err := op.list(ctx, f.client(), f.a, listParams{})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, "00000000-0000-4000-8000-000000000000", guidOf(t, items[0]))

	status, e, _ := f.raw("/config/v2/tipWithholding", f.header(f.a))
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, restaurantapi.ErrorKeyNOTFOUND, e.MessageKey)
}

func TestListMenuItems_PagesHoldAtMost300AndOnlyTheLastLacksAToken(t *testing.T) {
	for _, n := range []int{0, 1, 299, 300, 301, 1000} {
		t.Run(fmt.Sprintf("%d items", n), func(t *testing.T) {
			f := newFixture(t)
			if n > 0 {
				f.importDoc(f.a, restaurant.Document{MenuItems: restaurant.PlainItems("Dish", n)})
			}
			op := opFor(t, "menuItems")
			for _, size := range []*int{nil, ptr(restaurant.MaxPageSize)} {
				perPage := restaurant.DefaultPageSize
				if size != nil {
					perPage = *size
				}
				pages := f.walk(op, f.a, listParams{PageSize: size}, nil)
				wantPages := max(1, (n+perPage-1)/perPage)
				require.Len(t, pages, wantPages)
				seen := map[string]bool{}
				for i, p := range pages {
					assert.LessOrEqual(t, len(p), restaurant.MaxPageSize)
					if i < len(pages)-1 {
						assert.Len(t, p, perPage, "every page but the last is full")
					}
					for _, it := range p {
						g := guidOf(t, it)
						assert.False(t, seen[g], "returned twice: %s", g)
						seen[g] = true
					}
				}
				assert.Len(t, seen, n)
			}
		})
	}
}

func TestListMenuItems_TheLastPageHasNoNextPageHeader(t *testing.T) {
	f := newFixture(t)
	f.importDoc(f.a, restaurant.Document{MenuItems: restaurant.PlainItems("Dish", 301)})
	size := 300
	status, h, items, err := opFor(t, "menuItems").list(context.Background(), f.client(), f.a, listParams{PageSize: &size})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, items, 300)
	token := h.Get("Platform-Next-Page-Token")
	require.NotEmpty(t, token)
	status, h, items, err = opFor(t, "menuItems").list(context.Background(), f.client(), f.a, listParams{PageSize: &size, PageToken: &token})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, items, 1)
	_, present := h["Platform-Next-Page-Token"]
	assert.False(t, present)
}

func TestListMenuItems_DeprecatedPageAndPageSizeStillSelectAPage(t *testing.T) {
	f := newFixture(t)
	f.importDoc(f.a, restaurant.Document{MenuItems: restaurant.PlainItems("Dish", 250)})
	page, size := 2, 100
	status, _, items, err := opFor(t, "menuItems").list(context.Background(), f.client(), f.a, listParams{Page: &page, PageSize: &size})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, items, 100)
	assert.Equal(t, "00000000-0000-4000-8000-000000000100", guidOf(t, items[0]))
	assert.Equal(t, "00000000-0000-4000-8000-000000000199", guidOf(t, items[99]))
}

func TestListMenuItems_AWalkReturnsEveryItemPresentThroughoutExactlyOnceWhileDataChanges(t *testing.T) {
	f := newFixture(t)
	items := restaurant.PlainItems("Dish", 1000)
	f.importDoc(f.a, restaurant.Document{MenuItems: items})
	ctx := context.Background()

	archived := map[string]bool{}
	added := 0
	between := func(page int) {
		f.clock.Advance(time.Second)
		// Add items: they land after every existing one.
		fresh := restaurant.PlainItems("New", 1000+added+10)[1000+added:]
		for i := range fresh {
			fresh[i].Guid = strings.Replace(fresh[i].Guid, "00000000-0000-4000-8000", "11111111-0000-4000-8000", 1)
		}
		added += 10
		// Modify items both behind and ahead of the cursor.
		changed := []restaurantapi.MenuItem{items[page*50%1000], items[(page*97+500)%1000]}
		for i := range changed {
			changed[i].Name += " (renamed)"
		}
		f.importDoc(f.a, restaurant.Document{MenuItems: append(fresh, changed...)})
		// Archive one item ahead of the cursor and one behind it.
		for _, idx := range []int{(page*100 + 150) % 1000, page * 100 / 2} {
			g := items[idx].Guid
			if !archived[g] {
				require.NoError(t, f.srv.Operator().Archive(ctx, f.a, "menuItems", g))
				archived[g] = true
			}
		}
	}
	pages := f.walk(opFor(t, "menuItems"), f.a, listParams{}, between)

	count := map[string]int{}
	for _, p := range pages {
		assert.LessOrEqual(t, len(p), restaurant.MaxPageSize)
		for _, it := range p {
			count[guidOf(t, it)]++
		}
	}
	for g, n := range count {
		assert.Equal(t, 1, n, "returned %d times: %s", n, g)
	}
	for _, it := range items {
		if !archived[it.Guid] {
			assert.Equal(t, 1, count[it.Guid], "an item present for the whole walk was returned %d times: %s", count[it.Guid], it.Guid)
		}
	}
	assert.NotEmpty(t, archived)
}

func TestListMenuItems_LastModifiedKeepsOnlyWhatChangedAfterIt(t *testing.T) {
	f := newFixture(t)
	items := restaurant.PlainItems("Dish", 20)
	f.importDoc(f.a, restaurant.Document{MenuItems: items})
	f.clock.Advance(time.Minute)
	since := f.clock.Now()
	f.clock.Advance(time.Minute)
	items[3].Name = "Changed"
	f.importDoc(f.a, restaurant.Document{MenuItems: items}) // only item 3 differs
	f.importDoc(f.a, restaurant.Document{MenuItems: append(restaurant.PlainItems("Dish", 0), restaurantapi.MenuItem{
		Guid: "22222222-0000-4000-8000-000000000000", EntityType: "MenuItem", Name: "Created later",
		Type: restaurantapi.MenuItemTypeNONE, OptionGroups: []restaurantapi.ExternalReference{}, Images: []restaurantapi.Image{},
		UnitOfMeasure: restaurantapi.UnitOfMeasureNONE, OrderableOnline: restaurantapi.OrderableOnlineYES, Visibility: restaurantapi.VisibilityALL,
	})})

	for _, form := range []string{restaurant.FormatTimestamp(since), since.Format(time.RFC3339)} {
		t.Run(form, func(t *testing.T) {
			status, _, got, err := opFor(t, "menuItems").list(context.Background(), f.client(), f.a, listParams{LastModified: &form})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			guids := []string{}
			for _, it := range got {
				guids = append(guids, guidOf(t, it))
			}
			assert.Equal(t, []string{items[3].Guid, "22222222-0000-4000-8000-000000000000"}, guids)
		})
	}
}

func TestIsolation_AClientGrantedAGetsNothingOfB(t *testing.T) {
	f := newFixture(t)
	f.importDoc(f.a, restaurant.Document{MenuItems: restaurant.PlainItems("A dish", 5)})
	bItems := restaurant.PlainItems("B dish", 5)
	for i := range bItems {
		bItems[i].Guid = strings.Replace(bItems[i].Guid, "00000000", "bbbbbbbb", 1)
	}
	f.importDoc(f.b, restaurant.Document{MenuItems: bItems})
	ctx := context.Background()
	op := opFor(t, "menuItems")

	status, _, items, err := op.list(ctx, f.client(), f.b, listParams{})
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Empty(t, items)
	status, e, _ := f.raw("/config/v2/menuItems/"+bItems[0].Guid, f.header(f.b))
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, restaurantapi.ErrorKeyRESTAURANTNOTGRANTED, e.MessageKey)
	assert.NotContains(t, e.Message, "B dish")

	// B's entity asked for under A's header does not exist in A.
	status, _, err = op.get(ctx, f.client(), f.a, bItems[0].Guid)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, status)

	// A page token of A's list does not open B's, even to a client granted both.
	both, err := f.srv.Operator().CreateClient(ctx, "both", []string{f.a, f.b})
	require.NoError(t, err)
	f.token = f.login(both.ClientID, both.ClientSecret)
	one := 1
	_, h, _, err := op.list(ctx, f.client(), f.a, listParams{PageSize: &one})
	require.NoError(t, err)
	token := h.Get("Platform-Next-Page-Token")
	require.NotEmpty(t, token)
	status, e, _ = f.raw("/config/v2/menuItems?pageToken="+token, f.header(f.b))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, restaurantapi.ErrorKeyINVALIDPAGETOKEN, e.MessageKey)
}

func TestBadInput_EachAnswersItsOwnError(t *testing.T) {
	f := newFixture(t)
	f.importDoc(f.a, restaurant.Document{MenuItems: restaurant.PlainItems("Dish", 5)})
	one := 1
	_, h, _, err := opFor(t, "menuItems").list(context.Background(), f.client(), f.a, listParams{PageSize: &one})
	require.NoError(t, err)
	token := h.Get("Platform-Next-Page-Token")
	require.NotEmpty(t, token)
	edited := []byte(token)
	edited[2] ^= 1
	otherList := "/config/v2/menus?pageToken=" + token

	noHeader := http.Header{"Authorization": {"Bearer " + f.token}}
	tests := []struct {
		name   string
		path   string
		header http.Header
		status int
		key    restaurantapi.ErrorKey
		field  string
	}{
		{"malformed lastModified", "/config/v2/menuItems?lastModified=yesterday", f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDLASTMODIFIED, "lastModified"},
		{"impossible lastModified", "/config/v2/menuItems?lastModified=2015-13-45T00:00:00.000%2B0000", f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDLASTMODIFIED, "lastModified"},
		{"forged page token", "/config/v2/menuItems?pageToken=eyJzIjo5OTl9.AAAAAAAAAAAAAAAAAAAAAA", f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDPAGETOKEN, "pageToken"},
		{"edited page token", "/config/v2/menuItems?pageToken=" + string(edited), f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDPAGETOKEN, "pageToken"},
		{"page token of another list", otherList, f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDPAGETOKEN, "pageToken"},
		{"page token with another lastModified", "/config/v2/menuItems?lastModified=2015-12-01T00:00:00.000%2B0000&pageToken=" + token, f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDPAGETOKEN, "pageToken"},
		{"pageSize 0", "/config/v2/menuItems?pageSize=0", f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDREQUEST, "pageSize"},
		{"pageSize 301", "/config/v2/menuItems?pageSize=301", f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDREQUEST, "pageSize"},
		{"missing restaurant header", "/config/v2/menuItems", noHeader, 400, restaurantapi.ErrorKeyMISSINGRESTAURANTEXTERNALID, "Platform-Restaurant-External-ID"},
		{"malformed restaurant header", "/config/v2/menuItems", f.header("restaurant-a"), 400, restaurantapi.ErrorKeyINVALIDRESTAURANTEXTERNALID, "Platform-Restaurant-External-ID"},
		{"unknown restaurant, answered as not granted", "/config/v2/menuItems", f.header("0f0f0f0f-0000-4000-8000-000000000000"), 403, restaurantapi.ErrorKeyRESTAURANTNOTGRANTED, "Platform-Restaurant-External-ID"},
		{"restaurant not granted", "/config/v2/menuItems", f.header(f.b), 403, restaurantapi.ErrorKeyRESTAURANTNOTGRANTED, "Platform-Restaurant-External-ID"},
		{"malformed GUID", "/config/v2/menuItems/not-a-guid", f.header(f.a), 400, restaurantapi.ErrorKeyINVALIDREQUEST, "guid"},
		{"no token", "/config/v2/menuItems", http.Header{"Platform-Restaurant-External-Id": {f.a}}, 401, restaurantapi.ErrorKeyAUTHENTICATIONREQUIRED, ""},
		{"unknown token", "/config/v2/menuItems", http.Header{"Authorization": {"Bearer rst_nope"}, "Platform-Restaurant-External-Id": {f.a}}, 401, restaurantapi.ErrorKeyINVALIDTOKEN, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, e, _ := f.raw(tc.path, tc.header)
			assert.Equal(t, tc.status, status)
			assert.Equal(t, tc.key, e.MessageKey, e.Message)
			assert.Equal(t, tc.status, e.Status)
			assert.NotZero(t, e.Code)
			assert.NotEmpty(t, e.RequestId)
			if tc.field != "" {
				require.NotNil(t, e.FieldName)
				assert.Equal(t, tc.field, *e.FieldName)
			}
		})
	}
}

func TestAuth_AnExpiredTokenAndWrongCredentialsAreRefusedDistinctly(t *testing.T) {
	f := newFixture(t)
	f.clock.Advance(time.Hour + time.Second)
	status, e, _ := f.raw("/config/v2/menus", f.header(f.a))
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, restaurantapi.ErrorKeyTOKENEXPIRED, e.MessageKey)

	c, err := restaurantapi.NewClientWithResponses(f.url, restaurantapi.WithHTTPClient(&http.Client{Transport: f.transport()}))
	require.NoError(t, err)
	for _, creds := range [][2]string{{f.clientID, "wrong"}, {"unknown-client", f.secret}} {
		r, err := c.LoginWithResponse(context.Background(), restaurantapi.LoginJSONRequestBody{
			ClientId: creds[0], ClientSecret: creds[1], UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, r.StatusCode())
		assert.Equal(t, restaurantapi.ErrorKeyINVALIDCREDENTIALS, r.JSON401.MessageKey)
	}

	f.token = f.login(f.clientID, f.secret)
	r, err := f.client().LoginWithResponse(context.Background(), restaurantapi.LoginJSONRequestBody{
		ClientId: f.clientID, ClientSecret: f.secret, UserAccessType: restaurantapi.AuthenticationRequestUserAccessTypePLATFORMMACHINECLIENT})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.StatusCode())
	assert.Equal(t, "config:read", r.JSON200.Token.Scope)
	assert.Equal(t, 3600, r.JSON200.Token.ExpiresIn)
}

func TestRateLimit_PerSecondAndPerWindowAnswer429WithRetryAfter(t *testing.T) {
	tests := []struct {
		name           string
		perSecond      int
		perWindow      int
		wantRetryAfter string
		wait           time.Duration
	}{
		{"20 per second", 20, 10000, "1", time.Second},
		{"10,000 per 15 minutes scaled to 4", 100, 4, "225", 225 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *restaurant.Config) { c.RatePerSecond, c.RatePerWindow = tc.perSecond, tc.perWindow })
			allowed := min(tc.perSecond, tc.perWindow)
			for range allowed {
				status, _, _ := f.raw("/config/v2/menus", f.header(f.a))
				require.Equal(t, http.StatusOK, status)
			}
			status, e, h := f.raw("/config/v2/menus", f.header(f.a))
			assert.Equal(t, http.StatusTooManyRequests, status)
			assert.Equal(t, restaurantapi.ErrorKeyRATELIMITED, e.MessageKey)
			assert.True(t, e.CanRetry)
			assert.Equal(t, tc.wantRetryAfter, h.Get("Retry-After"))

			// The limit is per restaurant: another granted restaurant is unaffected.
			both, err := f.srv.Operator().CreateClient(context.Background(), "both", []string{f.a, f.b})
			require.NoError(t, err)
			f.token = f.login(both.ClientID, both.ClientSecret)
			status, _, _ = f.raw("/config/v2/menus", f.header(f.b))
			assert.Equal(t, http.StatusOK, status)

			f.clock.Advance(tc.wait)
			status, _, _ = f.raw("/config/v2/menus", f.header(f.a))
			assert.Equal(t, http.StatusOK, status)
		})
	}
}

func TestImport_ABadDocumentIsRejectedWholeAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	base := restaurant.Demo(restaurant.DemoOptions{MenuItems: 60, Seed: 1})
	f.importDoc(f.a, base)
	before, err := f.srv.Operator().Counts(ctx, f.a)
	require.NoError(t, err)

	// The first item is good; it must not be written either.
	dangling := restaurant.PlainItems("Fresh", 2)
	dangling[0].Guid = "44444444-0000-4000-8000-000000000000"
	dangling[1].OptionGroups = []restaurantapi.ExternalReference{{Guid: "99999999-0000-4000-8000-000000000000", EntityType: "MenuOptionGroup"}}
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"dangling reference", mustJSON(t, restaurant.Document{MenuItems: dangling}), "99999999-0000-4000-8000-000000000000 is neither in the document nor stored"},
		{"unknown resource", `{"menuz": []}`, "/menuz: unknown resource"},
		{"unknown field", `{"printers": [{"guid": "00000000-0000-4000-8000-000000000001", "name": "P", "colour": "red"}]}`, "/printers/0/colour: unknown field"},
		{"bad enum", `{"diningOptions": [{"guid": "00000000-0000-4000-8000-000000000001", "name": "Drive", "behavior": "DRIVE_THRU", "curbside": false}]}`, "/diningOptions/0"},
		{"reference of the wrong type", `{"cashDrawers": [{"guid": "00000000-0000-4000-8000-000000000001", "printer": {"guid": "00000000-0000-4000-8000-000000000002", "entityType": "Table"}}]}`, "refers to a Printer here"},
		{"duplicate GUID", mustJSON(t, restaurant.Document{MenuItems: append(restaurant.PlainItems("X", 1), restaurant.PlainItems("Y", 1)...)}), "appears twice"},
		{"not JSON", `[1, 2]`, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.srv.Operator().Import(ctx, f.a, []byte(tc.doc))
			var ie *restaurant.ImportError
			require.ErrorAs(t, err, &ie)
			assert.Contains(t, err.Error(), tc.want)
			after, err := f.srv.Operator().Counts(ctx, f.a)
			require.NoError(t, err)
			assert.Equal(t, before, after)
		})
	}
}

func TestImport_AReferenceMayNameAnEntityStoredBefore(t *testing.T) {
	f := newFixture(t)
	base := restaurant.Demo(restaurant.DemoOptions{MenuItems: 60, Seed: 1})
	f.importDoc(f.a, base)
	item := restaurant.PlainItems("Burger", 1)[0]
	item.Guid = "33333333-0000-4000-8000-000000000000"
	item.OptionGroups = []restaurantapi.ExternalReference{{Guid: base.MenuOptionGroups[0].Guid, EntityType: "MenuOptionGroup"}}
	res := f.importDoc(f.a, restaurant.Document{MenuItems: []restaurantapi.MenuItem{item}})
	assert.Equal(t, 1, res.Total)
	_, err := f.srv.Operator().Import(context.Background(), "0f0f0f0f-0000-4000-8000-000000000000", []byte(`{}`))
	assert.ErrorIs(t, err, storeerr.ErrNotFound)
}

func TestDemo_FillsEveryResourceWithExactlyTheItemsAskedFor(t *testing.T) {
	for _, n := range []int{0, 1, 30, 500} {
		d := restaurant.Demo(restaurant.DemoOptions{MenuItems: n, Seed: 42})
		assert.Len(t, d.MenuItems, n)
		if n == 500 {
			for k, items := range documentSections(t, d) {
				assert.NotEmpty(t, items, k)
			}
			assert.Len(t, documentSections(t, d), len(restaurant.Resources()))
		}
	}
	again := restaurant.Demo(restaurant.DemoOptions{MenuItems: 500, Seed: 42})
	assert.Equal(t, restaurant.Demo(restaurant.DemoOptions{MenuItems: 500, Seed: 42}), again, "the same seed gives the same document")
}

func mustJSON(t *testing.T, v any) string {
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

func ptr[T any](v T) *T { return &v }

func TestConsole_RestaurantsClientsAndPages(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{})
	ctx := context.Background()

	rs, err := env.Server.Console().Restaurants(ctx)
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, "Other Bistro", rs[0].Name)
	assert.Equal(t, "Test Bistro", rs[1].Name)

	clients, err := env.Server.Console().Clients(ctx)
	require.NoError(t, err)
	require.Len(t, clients, 1)
	assert.Equal(t, restaurant.ConsoleClient{ID: env.ClientID, Name: "test client", CreatedAt: clients[0].CreatedAt, Restaurants: []string{env.Restaurant}}, clients[0])

	res, err := env.Server.Console().GenerateDemo(ctx, env.Restaurant, 30, 7)
	require.NoError(t, err)
	require.Positive(t, res.Counts["menuItems"])

	// Paging through the whole list with the API's tokens gives every item once.
	seen := map[string]bool{}
	token, pages := "", 0
	for {
		docs, next, err := env.Server.Console().Page(ctx, env.Restaurant, "menuItems", token, 7)
		require.NoError(t, err)
		pages++
		for _, d := range docs {
			var e struct{ GUID string }
			require.NoError(t, json.Unmarshal(d, &e))
			assert.False(t, seen[e.GUID], "each item once")
			seen[e.GUID] = true
		}
		if next == "" {
			break
		}
		token = next
	}
	assert.Len(t, seen, res.Counts["menuItems"])
	assert.Equal(t, (res.Counts["menuItems"]+6)/7, pages)

	_, _, err = env.Server.Console().Page(ctx, env.Restaurant, "menuItems", "forged", 7)
	assert.Error(t, err)
	_, _, err = env.Server.Console().Page(ctx, env.Restaurant, "nope", "", 0)
	assert.ErrorIs(t, err, storeerr.ErrNotFound)

	_, err = env.Server.Console().Import(ctx, env.Restaurant, []byte(`{"menuItems":[{"guid":"not-a-guid"}]}`))
	var ie *restaurant.ImportError
	require.ErrorAs(t, err, &ie)
	assert.NotEmpty(t, ie.Problems)
}

// TestEveryBody_ThatStallsIs408RequestTimeout sends every operation that
// takes a body (the login, which carries the credentials in it) a body that
// stalls past the read timeout: each is answered 408 REQUEST_TIMEOUT in the
// restaurant API's error body, checked against the spec, with canRetry set.
func TestEveryBody_ThatStallsIs408RequestTimeout(t *testing.T) {
	env := restauranttest.Start(t, restauranttest.Options{})
	stalledbody.Run(t, stalledbody.Target{
		Spec:       restaurantserver.GetSpec,
		Handler:    env.Server.Handler,
		PathValues: map[string]string{"restaurantGuid": env.Restaurant},
		CheckBody: func(t *testing.T, _ stalledbody.Operation, _ http.Header, body []byte) {
			e := stalledbody.DecodeJSON[restaurantapi.Error](t, body)
			assert.Equal(t, http.StatusRequestTimeout, e.Status)
			assert.Equal(t, restaurantapi.ErrorKeyREQUESTTIMEOUT, e.MessageKey)
			assert.NotEmpty(t, e.RequestId)
			assert.True(t, e.CanRetry, "the same request, its body sent in time, may succeed")
		},
	})
}

// A login keeps the pages and documents cached (no cache holds a token's
// absence); a write drops them.
func TestAuth_ALoginKeepsThePagesCached(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// What the set-up committed is heard (PostgreSQL) before the count.
	require.NoError(t, sqldb.Sync(ctx, f.db))
	pages, entities := restaurant.PagesGeneration(f.srv)
	for range 3 {
		f.login(f.clientID, f.secret)
	}
	require.NoError(t, sqldb.Sync(ctx, f.db))
	p, e := restaurant.PagesGeneration(f.srv)
	assert.Equal(t, [2]uint64{pages, entities}, [2]uint64{p, e}, "logins drop no page")
	_, err := f.srv.Operator().CreateRestaurant(ctx, "", "Restaurant C")
	require.NoError(t, err)
	p, e = restaurant.PagesGeneration(f.srv)
	assert.NotEqual(t, pages, p, "a write drops the pages")
	assert.NotEqual(t, entities, e, "and the documents")
}
