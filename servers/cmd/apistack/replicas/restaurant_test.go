package replicas

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/testkit"
)

// TestReplicas_RestaurantMenuWalk: a paged walk of a 1,000-item menu whose
// pages come from different replicas (a page token signed by one replica
// read by the next) sees every item once.
func TestReplicas_RestaurantMenuWalk(t *testing.T) {
	c := newCluster(t)
	rs := c.start(t, 3, "--restaurant-rate-per-second", "100000")
	admin := client("admin", rs...)
	const guid = "5f0c3a2e-8d41-4b7a-9e6c-1a2b3c4d5e6f"
	mustCall(t, admin, http.MethodPost, "http://admin/restaurant/restaurants", c.adminToken,
		map[string]any{"name": "Walk", "guid": guid}, http.StatusCreated, nil)
	mustCall(t, admin, http.MethodPost, "http://admin/restaurant/restaurants/"+guid+"/demo", c.adminToken,
		map[string]any{"menuItems": 1000, "seed": 7}, http.StatusOK, nil)
	var restaurant struct {
		Counts map[string]int `json:"counts"`
	}
	mustCall(t, admin, http.MethodGet, "http://admin/restaurant/restaurants/"+guid, c.adminToken, nil, http.StatusOK, &restaurant)
	stored := restaurant.Counts["menuItems"]
	require.GreaterOrEqual(t, stored, 1000)
	var creds struct {
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
	}
	mustCall(t, admin, http.MethodPost, "http://admin/restaurant/clients", c.adminToken,
		map[string]any{"name": "walker", "restaurants": []string{guid}}, http.StatusCreated, &creds)

	rr := client("restaurant", rs...)
	var login struct {
		Token struct {
			AccessToken string `json:"accessToken"`
		} `json:"token"`
	}
	mustCall(t, rr, http.MethodPost, "http://restaurant/authentication/v1/authentication/login", "",
		map[string]string{"clientId": creds.ClientID, "clientSecret": creds.ClientSecret, "userAccessType": "PLATFORM_MACHINE_CLIENT"},
		http.StatusOK, &login)

	seen := map[string]int{}
	pages := 0
	token := ""
	for {
		u := "http://restaurant/config/v2/menuItems?pageSize=70"
		if token != "" {
			u += "&pageToken=" + url.QueryEscape(token)
		}
		var items []struct {
			GUID string `json:"guid"`
		}
		resp := expect(t, testkit.Request{Method: http.MethodGet, URL: u, Token: login.Token.AccessToken, Client: rr,
			Header: []string{"Platform-Restaurant-External-ID", guid}}, http.StatusOK, &items)
		pages++
		for _, it := range items {
			seen[it.GUID]++
		}
		token = resp.Header.Get("Platform-Next-Page-Token")
		if token == "" {
			break
		}
	}
	assert.Greater(t, pages, 3*2, "pages came from every replica, more than once")
	assert.Len(t, seen, stored, "every stored item")
	for guid, n := range seen {
		assert.Equal(t, 1, n, "item %s", guid)
	}
}
