package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/apistack/apistack/gen/adminapi"
)

// restaurantAdminCommands are the restaurant commands of `apistack admin`.
var restaurantAdminCommands = []adminCmd{
	{name: "restaurant-create", args: "NAME [GUID]", help: "create a restaurant", minArgs: 1, maxArgs: 2,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			req := adminapi.RestaurantCreateRequest{Name: a[0]}
			if len(a) == 2 {
				req.Guid = &a[1]
			}
			return c.CreateRestaurant(ctx, req)
		})},
	{name: "restaurant-get", args: "GUID", help: "show a restaurant and its entity counts", minArgs: 1, maxArgs: 1,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.GetRestaurant(ctx, a[0])
		})},
	{name: "restaurant-create-client", args: "NAME GUID[,GUID]", help: "create an API client granted those restaurants", minArgs: 2, maxArgs: 2,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.CreateRestaurantClient(ctx, adminapi.RestaurantCreateClientRequest{Name: a[0], Restaurants: strings.Split(a[1], ",")})
		})},
	{name: "restaurant-import", args: "GUID FILE.json", help: "import a configuration document (all or nothing)", minArgs: 2, maxArgs: 2,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			doc, err := os.ReadFile(a[1])
			if err != nil {
				return nil, err
			}
			return c.ImportRestaurantConfigurationWithBody(ctx, a[0], "application/json", bytes.NewReader(doc))
		})},
	{name: "restaurant-demo", args: "GUID MENU_ITEMS", help: "import a generated demo configuration", minArgs: 2, maxArgs: 2,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			n, err := strconv.Atoi(a[1])
			if err != nil {
				return nil, fmt.Errorf("MENU_ITEMS: %w", err)
			}
			return c.GenerateRestaurantDemo(ctx, a[0], adminapi.RestaurantDemoRequest{MenuItems: n})
		})},
	{name: "restaurant-archive", args: "GUID RESOURCE ENTITY", help: "archive an entity (e.g. RESOURCE menuItems)", minArgs: 3, maxArgs: 3,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.ArchiveRestaurantEntity(ctx, a[0], adminapi.RestaurantResource(a[1]), a[2])
		})},
	{name: "restaurant-remove", args: "GUID RESOURCE ENTITY", help: "remove an entity", minArgs: 3, maxArgs: 3,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.RemoveRestaurantEntity(ctx, a[0], adminapi.RestaurantResource(a[1]), a[2])
		})},
}
