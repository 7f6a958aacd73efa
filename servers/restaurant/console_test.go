package restaurant_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
)

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
	assert.ErrorIs(t, err, restaurant.ErrNotFound)

	_, err = env.Server.Console().Import(ctx, env.Restaurant, []byte(`{"menuItems":[{"guid":"not-a-guid"}]}`))
	var ie *restaurant.ImportError
	require.ErrorAs(t, err, &ie)
	assert.NotEmpty(t, ie.Problems)
}
