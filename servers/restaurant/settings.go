package restaurant

import "time"

// Settings are the restaurant server's knobs: the one place each is
// declared, with its default and its flag of `apistack serve` (tags read by
// servers/internal/descriptor). The zero value of a field means its
// default. The stack (servers/stack), serve, the test kit (apistacktest) and
// the harness (restauranttest) take them as they are.
type Settings struct {
	// TokenTTL is the lifetime of a bearer token.
	TokenTTL time.Duration `flag:"restaurant-token-ttl" default:"1h" help:"lifetime of restaurant bearer tokens"`
	// RatePerSecond requests are allowed per second per restaurant.
	RatePerSecond int `flag:"restaurant-rate-per-second" default:"20" help:"restaurant requests allowed per second per restaurant"`
	// RatePerWindow requests are allowed per RateWindow per restaurant.
	RatePerWindow int           `flag:"restaurant-rate-limit" default:"10000" help:"restaurant requests allowed per restaurant per --restaurant-rate-period"`
	RateWindow    time.Duration `flag:"restaurant-rate-period" default:"15m" help:"restaurant rate-limit period"`
}
