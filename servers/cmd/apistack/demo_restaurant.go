package main

import (
	"fmt"
	"io"
)

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
