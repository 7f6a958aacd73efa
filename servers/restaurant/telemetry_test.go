package restaurant_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
	"github.com/apistack/apistack/servers/restaurant"
)

// TestTelemetry_RefusalsOfEachLimitAreCounted lowers the two limits per
// restaurant and spends them through the generated client.
func TestTelemetry_RefusalsOfEachLimitAreCounted(t *testing.T) {
	ctx := context.Background()
	log := requestlog.New(0)
	tel := telemetry.New(log)
	f := newFixture(t, func(c *restaurant.Config) { c.RatePerSecond, c.RatePerWindow, c.Telemetry = 2, 3, tel })
	c := f.client()
	list := func() int {
		t.Helper()
		r, err := c.ListMenusWithResponse(ctx, &restaurantapi.ListMenusParams{PlatformRestaurantExternalID: f.a})
		require.NoError(t, err)
		return r.StatusCode()
	}
	// Two a second: the third is refused by the per-second limit; a second
	// later the window (three) lets one more through, then refuses.
	assert.Equal(t, []int{200, 200, 429}, []int{list(), list(), list()})
	f.clock.Advance(time.Second)
	assert.Equal(t, []int{200, 429}, []int{list(), list()})

	fam := telemetrytest.ScrapeHandler(t, tel.Handler())
	assert.Equal(t, 1.0, fam.Value("apistack_rate_limit_refusals_total", map[string]string{"api": "restaurant", "limit": telemetry.LimitPerSecond}))
	assert.Equal(t, 1.0, fam.Value("apistack_rate_limit_refusals_total", map[string]string{"api": "restaurant", "limit": telemetry.LimitPerWindow}))
	assert.Equal(t, 3.0, fam.Value("apistack_http_requests_total", map[string]string{"api": "restaurant", "operation": "ListMenus", "status": "200"}))
	assert.Equal(t, 2.0, fam.Value("apistack_http_requests_total", map[string]string{"api": "restaurant", "operation": "ListMenus", "status": "429"}))
	assert.Equal(t, 1.0, fam.Value("apistack_http_requests_total", map[string]string{"api": "restaurant", "operation": "Login", "status": "200"}))

	refused := log.Recent(requestlog.Filter{API: "restaurant", MinStatus: http.StatusTooManyRequests, MaxStatus: http.StatusTooManyRequests})
	require.Len(t, refused, 2)
	for _, e := range refused {
		assert.Equal(t, "ListMenus", e.Operation)
		assert.Equal(t, "/config/v2/menus", e.Path)
	}
}
