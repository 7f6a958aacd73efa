package restaurant_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/contractsweep"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/restaurant"
)

// sweep sends one request to every operation declaring want, built from the
// spec with the given restaurant header and token (none when empty), and
// asserts each is answered want in the declared shape (the middleware and
// the contract transport check every answer).
func (f *fixture) sweep(t *testing.T, want int, restaurantID, token string, secured bool) {
	t.Helper()
	f.sweepWith(t, want, map[string]string{"Platform-Restaurant-External-ID": restaurantID}, token, secured)
}

// sweepWith is sweep with every parameter value given (contractsweep.Status,
// a login request's body where one is sent).
func (f *fixture) sweepWith(t *testing.T, want int, values map[string]string, token string, secured bool) {
	t.Helper()
	auth := ""
	if token != "" {
		auth = "Bearer " + token
	}
	login := `{"clientId":"` + f.clientID + `","clientSecret":"` + f.secret + `","userAccessType":"PLATFORM_MACHINE_CLIENT"}`
	contractsweep.Status(t, want, contractsweep.Sweep{
		API: contract.Restaurant, BaseURL: f.url, Values: values, Authorization: auth,
		Body: func(string) string { return login }, Keep: contractsweep.Secured(secured),
	})
}

func TestEveryOperation_WithoutATokenAnswers401(t *testing.T) {
	f := newFixture(t)
	f.sweep(t, http.StatusUnauthorized, f.a, "", true)
}

func TestEveryOperation_ForARestaurantNotGrantedAnswers403(t *testing.T) {
	f := newFixture(t)
	f.sweep(t, http.StatusForbidden, f.b, f.token, true)
}

func TestEveryOperation_WithAMalformedRestaurantIDAnswers400(t *testing.T) {
	f := newFixture(t)
	f.sweep(t, http.StatusBadRequest, "not-a-guid", f.token, true)
}

func TestEveryOperation_OverTheRateLimitAnswers429(t *testing.T) {
	f := newFixture(t, func(c *restaurant.Config) { c.RatePerSecond, c.RatePerWindow = 1, 1 })
	// The first request spends the restaurant's allowance (the fake clock
	// never refills it); every later one is refused.
	f.raw("/config/v2/menus", http.Header{"Authorization": {"Bearer " + f.token}, "Platform-Restaurant-External-ID": {f.a}})
	f.sweep(t, http.StatusTooManyRequests, f.a, f.token, true)
}

func TestEveryOperation_WhenTheDatabaseFailsAnswers500(t *testing.T) {
	f := newFixture(t)
	testdb.DropTables(t, f.db)
	f.sweep(t, http.StatusInternalServerError, f.a, f.token, true)
	f.sweep(t, http.StatusInternalServerError, f.a, "", false)
}

func TestEveryOperation_WhenTheDatabaseIsGoneAnswers503(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.db.Close())
	f.sweep(t, http.StatusServiceUnavailable, f.a, f.token, true)
	f.sweep(t, http.StatusServiceUnavailable, f.a, "", false)
}

func TestEveryOperation_ForAnUnknownEntityAnswers404(t *testing.T) {
	f := newFixture(t)
	f.sweepWith(t, http.StatusNotFound, map[string]string{
		"Platform-Restaurant-External-ID": f.a, "guid": "0f4c2a1e-9b7d-4c3a-8e6f-5d4c3b2a1f0e"}, f.token, true)
}

func TestLogin_RefusesWhatIsNotALoginRequest(t *testing.T) {
	f := newFixture(t)
	client := &http.Client{Transport: f.transport(contract.WithoutRequestValidation())}
	tests := []struct {
		name, contentType, body string
		want                    int
	}{
		{"missing field", "application/json", `{"clientId":"x"}`, http.StatusBadRequest},
		{"wrong access type", "application/json", `{"clientId":"x","clientSecret":"y","userAccessType":"HUMAN"}`, http.StatusBadRequest},
		{"form encoded", "application/x-www-form-urlencoded", "clientId=x&clientSecret=y", http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := client.Post(f.url+"/authentication/v1/authentication/login", tt.contentType, strings.NewReader(tt.body))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tt.want, resp.StatusCode, string(body))
		})
	}
}

func TestEveryOperation_WithABodyOverTheLimitAnswers413(t *testing.T) {
	f := newFixture(t)
	contractsweep.TooLarge(t, contract.Restaurant, f.url, nil, "Bearer "+f.token, func(string) int64 { return 16 << 10 })
}
