package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apistack/apistack/servers/restaurant"
)

// restaurantCredentials is the restaurant section of demo-credentials.json.
type restaurantCredentials struct {
	BaseURL        string `json:"base_url"`
	ClientID       string `json:"client_id"`
	ClientSecret   string `json:"client_secret"`
	RestaurantGUID string `json:"restaurant_guid"`
}

// The demo restaurant has a fixed GUID, so every start finds the same one,
// and enough menu items that pagination shows (pages hold at most 300).
const (
	demoRestaurantGUID      = "7d3e6a1c-5b2f-4c8e-9a41-2f6b8c0d1e37"
	demoRestaurantName      = "Demo Bistro"
	demoRestaurantMenuItems = 500
)

// bootstrapRestaurantDemo creates the demo restaurant with a generated
// configuration (every resource non-empty) and an API client granted it. It
// is idempotent: an existing configuration is left as it is, and credentials
// from a previous run that still work are kept.
func bootstrapRestaurantDemo(ctx context.Context, s *restaurant.Server, previous *restaurantCredentials) (*restaurantCredentials, error) {
	if _, err := s.CreateRestaurant(ctx, demoRestaurantGUID, demoRestaurantName); err != nil && !errors.Is(err, restaurant.ErrAlreadyExists) {
		return nil, err
	}
	counts, err := s.Counts(ctx, demoRestaurantGUID)
	if err != nil {
		return nil, err
	}
	if counts["menuItems"] == 0 {
		data, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: demoRestaurantMenuItems, Seed: 1}))
		if err != nil {
			return nil, err
		}
		if _, err := s.Import(ctx, demoRestaurantGUID, data); err != nil {
			return nil, fmt.Errorf("import the demo configuration: %w", err)
		}
	}
	if previous != nil && previous.RestaurantGUID == demoRestaurantGUID &&
		s.ClientWorks(ctx, previous.ClientID, previous.ClientSecret, demoRestaurantGUID) {
		return &restaurantCredentials{ClientID: previous.ClientID, ClientSecret: previous.ClientSecret, RestaurantGUID: demoRestaurantGUID}, nil
	}
	c, err := s.CreateClient(ctx, "demo", []string{demoRestaurantGUID})
	if err != nil {
		return nil, err
	}
	return &restaurantCredentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret, RestaurantGUID: demoRestaurantGUID}, nil
}

// printRestaurantDemo prints the login curl line and one that lists menus
// with the token it returns.
func printRestaurantDemo(w io.Writer, r *restaurantCredentials) {
	if r == nil {
		return
	}
	login := fmt.Sprintf(`curl -s -X POST %s/authentication/v1/authentication/login -H 'Content-Type: application/json' -d '{"clientId":"%s","clientSecret":"%s","userAccessType":"PLATFORM_MACHINE_CLIENT"}'`,
		r.BaseURL, r.ClientID, r.ClientSecret)
	fmt.Fprintf(w, "restaurant %s  (docs: %s/docs/)\n", r.BaseURL, r.BaseURL)
	fmt.Fprintf(w, "  login:   %s\n", login)
	fmt.Fprintf(w, "  menus:   curl -s %s/config/v2/menus -H 'Platform-Restaurant-External-ID: %s' -H \"Authorization: Bearer $(%s | sed -E 's/.*\"accessToken\":\"([^\"]+)\".*/\\1/')\"\n",
		r.BaseURL, r.RestaurantGUID, login)
}
