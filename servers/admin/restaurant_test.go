package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/internal/tenantapi"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
)

// restaurantAdmin is the admin API over a restaurant server.
type restaurantAdmin struct {
	api           *adminapi.ClientWithResponses
	restaurantURL string
}

func startRestaurantAdmin(t *testing.T) *restaurantAdmin {
	t.Helper()
	return startRestaurantAdminTB(t)
}

// startRestaurantAdminTB is startRestaurantAdmin for a test or a benchmark.
func startRestaurantAdminTB(t testing.TB) *restaurantAdmin {
	t.Helper()
	rest := restauranttest.Start(t, restauranttest.Options{})
	return &restaurantAdmin{api: adminOver(t, admin.Config{Restaurant: rest.Operator}), restaurantURL: rest.URL}
}

// newRestaurant creates an empty restaurant named name through env's admin
// API and returns its GUID.
func (env *restaurantAdmin) newRestaurant(tb testing.TB, name string) string {
	tb.Helper()
	guid := uuid.NewString()
	created, err := env.api.CreateRestaurantWithResponse(context.Background(), adminapi.RestaurantCreateRequest{Guid: &guid, Name: name})
	require.NoError(tb, err)
	require.Equal(tb, http.StatusCreated, created.StatusCode(), string(created.Body))
	return guid
}

// menuItemNames lists the menu items a client sees.
func menuItemNames(t *testing.T, c *tenantapi.RestaurantClient) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for item, err := range c.ListMenuItems(context.Background(), nil) {
		require.NoError(t, err)
		seen[item.Guid] = true
	}
	return seen
}

func TestRestaurantAdmin_CreateGrantImportArchiveRemove(t *testing.T) {
	env := startRestaurantAdmin(t)
	ctx := context.Background()
	guid := uuid.NewString()

	created, err := env.api.CreateRestaurantWithResponse(ctx, adminapi.RestaurantCreateRequest{Guid: &guid, Name: "Harbour Grill"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	again, err := env.api.CreateRestaurantWithResponse(ctx, adminapi.RestaurantCreateRequest{Guid: &guid, Name: "Harbour Grill"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, again.StatusCode(), "a GUID is created once")

	unknown, err := env.api.CreateRestaurantClientWithResponse(ctx, adminapi.RestaurantCreateClientRequest{Name: "pos", Restaurants: []string{uuid.NewString()}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, unknown.StatusCode(), "a client cannot be granted a restaurant that does not exist")

	client, err := env.api.CreateRestaurantClientWithResponse(ctx, adminapi.RestaurantCreateClientRequest{Name: "pos", Restaurants: []string{guid}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, client.StatusCode(), string(client.Body))
	require.NotEmpty(t, client.JSON201.ClientSecret)

	demo, err := env.api.GenerateRestaurantDemoWithResponse(ctx, guid, adminapi.RestaurantDemoRequest{MenuItems: 40})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, demo.StatusCode(), string(demo.Body))
	assert.Equal(t, 40, demo.JSON200.Counts["menuItems"])

	before, err := env.api.GetRestaurantWithResponse(ctx, guid)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, before.StatusCode(), string(before.Body))

	// A document referring to an entity that exists nowhere is refused whole.
	bad := `{"menuItems":[{"guid":"` + uuid.NewString() + `","entityType":"MenuItem","name":"Ghost soup","optionGroups":[{"guid":"` + uuid.NewString() + `","entityType":"MenuOptionGroup"}]}]}`
	rejected, err := env.api.ImportRestaurantConfigurationWithBodyWithResponse(ctx, guid, "application/json", strings.NewReader(bad))
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, rejected.StatusCode(), string(rejected.Body))
	after, err := env.api.GetRestaurantWithResponse(ctx, guid)
	require.NoError(t, err)
	assert.Equal(t, string(before.Body), string(after.Body), "a refused import changes nothing")

	// The API client the admin API created signs in and reads the menu.
	rc := tenantapi.NewRestaurant(t, env.restaurantURL, client.JSON201.ClientId, client.JSON201.ClientSecret, guid)
	items := menuItemNames(t, rc)
	require.Len(t, items, 40)

	var archived, removed string
	for g := range items {
		if archived == "" {
			archived = g
		} else if removed == "" {
			removed = g
		}
	}
	resp, err := env.api.ArchiveRestaurantEntityWithResponse(ctx, guid, adminapi.RestaurantResourceMenuItems, archived)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, resp.StatusCode(), string(resp.Body))
	rm, err := env.api.RemoveRestaurantEntityWithResponse(ctx, guid, adminapi.RestaurantResourceMenuItems, removed)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, rm.StatusCode(), string(rm.Body))

	items = menuItemNames(t, rc)
	assert.Len(t, items, 38)
	assert.NotContains(t, items, archived, "archived entities are never returned")
	assert.NotContains(t, items, removed, "removed entities are never returned")
	_, err = rc.GetMenuItem(ctx, archived)
	var apiErr *tenantapi.AnswerError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.Status)

	missing, err := env.api.ArchiveRestaurantEntityWithResponse(ctx, guid, adminapi.RestaurantResourceMenuItems, uuid.NewString())
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, missing.StatusCode())
}

// TestImportLateDuplicateOrDanglingReferenceWritesNothing imports realistic
// documents larger than a write batch whose problem, a GUID given twice or a
// reference to an entity that exists nowhere, comes last, once thousands of
// entities were written: the database's checks find it, the answer names
// its pointer, and the restaurant keeps nothing of the document.
func TestImportLateDuplicateOrDanglingReferenceWritesNothing(t *testing.T) {
	env := startPlainRestaurantAdmin(t)
	base := restaurant.Demo(restaurant.DemoOptions{MenuItems: 6000, Seed: 3})
	n := len(base.MenuItems)
	twin := base.MenuItems[0]
	twin.Guid = strings.ToUpper(twin.Guid) // GUIDs compare without case
	ghost := uuid.NewString()
	orphan := base.MenuItems[1]
	orphan.Guid = uuid.NewString()
	orphan.OptionGroups = []restaurantapi.ExternalReference{{Guid: ghost, EntityType: "MenuOptionGroup"}}
	tests := []struct {
		name  string
		extra []restaurantapi.MenuItem
		want  []string
	}{
		{"duplicate GUID", []restaurantapi.MenuItem{twin},
			[]string{"(1 problems)", fmt.Sprintf("/menuItems/%d/guid: %s appears twice in menuItems", n, strings.ToLower(twin.Guid))}},
		{"dangling reference", []restaurantapi.MenuItem{orphan},
			[]string{"(1 problems)", fmt.Sprintf("/menuItems/%d/optionGroups/0: menuOptionGroups %s is neither in the document nor stored", n, ghost)}},
		{"both", []restaurantapi.MenuItem{orphan, twin},
			[]string{"(2 problems)", fmt.Sprintf("/menuItems/%d/guid: ", n+1), fmt.Sprintf("/menuItems/%d/optionGroups/0: ", n)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := *base
			doc.MenuItems = append(append([]restaurantapi.MenuItem(nil), base.MenuItems...), tc.extra...)
			body, err := json.Marshal(doc)
			require.NoError(t, err)
			require.Greater(t, len(body), 2<<20)
			guid := env.newRestaurant(t, "Import")
			ctx := context.Background()
			resp, err := env.api.ImportRestaurantConfigurationWithBodyWithResponse(ctx, guid, "application/json", bytes.NewReader(body))
			require.NoError(t, err)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode(), string(resp.Body))
			for _, w := range tc.want {
				assert.Contains(t, string(resp.Body), w)
			}
			got, err := env.api.GetRestaurantWithResponse(ctx, guid)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, got.StatusCode())
			assert.Empty(t, got.JSON200.Counts, "a refused import writes nothing")
		})
	}
}

// TestImportHoldsNoWriterWhileItsBodyArrives sends an import's document in
// two parts and, between them, while the server has read half of it,
// creates a restaurant: the import has taken no lock of the database yet
// (it spools what it read and writes only once the whole document is in),
// so the creation is answered at once, and the import then succeeds.
func TestImportHoldsNoWriterWhileItsBodyArrives(t *testing.T) {
	env := startPlainRestaurantAdmin(t)
	guid := env.newRestaurant(t, "Import")
	body, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: 6000, Seed: 5}))
	require.NoError(t, err)
	require.Greater(t, len(body), 2<<20, "more than a write batch is sent before the pause")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	type answer struct {
		resp *adminapi.ImportRestaurantConfigurationResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := env.api.ImportRestaurantConfigurationWithBodyWithResponse(ctx, guid, "application/json", pr)
		done <- answer{resp, err}
	}()
	half := len(body) * 3 / 4
	_, err = pw.Write(body[:half]) // returns once the server has read it all
	require.NoError(t, err)

	other := uuid.NewString()
	created, err := env.api.CreateRestaurantWithResponse(ctx, adminapi.RestaurantCreateRequest{Guid: &other, Name: "Meanwhile"})
	require.NoError(t, err, "a write while an import's body arrives is not held up by the import")
	assert.Equal(t, http.StatusCreated, created.StatusCode())
	select {
	case a := <-done:
		t.Fatalf("the import ended before its body did: %v %v", a.resp, a.err)
	default:
	}

	_, err = pw.Write(body[half:])
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	a := <-done
	require.NoError(t, a.err)
	require.Equal(t, http.StatusOK, a.resp.StatusCode(), string(a.resp.Body))
	assert.Equal(t, 6000, a.resp.JSON200.Counts["menuItems"])
}

func TestImportRestaurantConfiguration_AValidDocumentIsImportedWhole(t *testing.T) {
	env := startRestaurantAdmin(t)
	ctx := context.Background()
	guid := env.newRestaurant(t, "Dockside")

	data, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: 7, Seed: 3}))
	require.NoError(t, err)
	var doc adminapi.RestaurantConfiguration
	require.NoError(t, json.Unmarshal(data, &doc))
	imported, err := env.api.ImportRestaurantConfigurationWithResponse(ctx, guid, doc)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, imported.StatusCode(), string(imported.Body))

	got, err := env.api.GetRestaurantWithResponse(ctx, guid)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	assert.Contains(t, string(got.Body), `"menuItems":7`, "the restaurant counts what was imported")
}
