package restaurant

import (
	"cmp"
	"flag"
	"time"
)

// Settings are the restaurant server's knobs: the one place each is
// declared, with its default. The zero value of a field means its default.
// `apistack serve` binds its --restaurant-* flags to them (RegisterFlags);
// the stack (servers/stack), the test kit (apistacktest) and the harness
// (restauranttest) take them as they are.
type Settings struct {
	// TokenTTL is the lifetime of a bearer token; 0 means DefaultTokenTTL.
	TokenTTL time.Duration
	// RatePerSecond requests are allowed per second per restaurant; 0
	// means DefaultRatePerSecond.
	RatePerSecond int
	// RatePerWindow requests are allowed per RateWindow per restaurant; 0
	// means DefaultRatePerWindow per DefaultRateWindow.
	RatePerWindow int
	RateWindow    time.Duration
}

// The defaults of Settings.
const (
	DefaultTokenTTL      = time.Hour
	DefaultRatePerSecond = 20
	DefaultRatePerWindow = 10000
	DefaultRateWindow    = 15 * time.Minute
)

// withDefaults returns s with every zero field set to its default.
func (s Settings) withDefaults() Settings {
	s.TokenTTL = cmp.Or(s.TokenTTL, DefaultTokenTTL)
	s.RatePerSecond = cmp.Or(s.RatePerSecond, DefaultRatePerSecond)
	s.RatePerWindow = cmp.Or(s.RatePerWindow, DefaultRatePerWindow)
	s.RateWindow = cmp.Or(s.RateWindow, DefaultRateWindow)
	return s
}

// RegisterFlags declares the --restaurant-* flags of `apistack serve` on fs,
// bound to s and showing the defaults.
func (s *Settings) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.TokenTTL, "restaurant-token-ttl", DefaultTokenTTL, "lifetime of restaurant bearer tokens")
	fs.IntVar(&s.RatePerSecond, "restaurant-rate-per-second", DefaultRatePerSecond, "restaurant requests allowed per second per restaurant")
	fs.IntVar(&s.RatePerWindow, "restaurant-rate-limit", DefaultRatePerWindow, "restaurant requests allowed per restaurant per --restaurant-rate-period")
	fs.DurationVar(&s.RateWindow, "restaurant-rate-period", DefaultRateWindow, "restaurant rate-limit period")
}
