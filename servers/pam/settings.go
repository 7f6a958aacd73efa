package pam

import (
	"cmp"
	"flag"
	"time"
)

// Settings are the PAM server's knobs: the one place each is declared, with
// its default. The zero value of a field means its default. `apistack serve`
// binds its --pam-* flags to them (RegisterFlags); the stack
// (servers/stack), the test kit (apistacktest) and the harness (pamtest)
// take them as they are.
type Settings struct {
	// TokenTTL is the lifetime of a bearer token; 0 means DefaultTokenTTL.
	TokenTTL time.Duration
	// RateLimit requests are allowed per RateLimitPeriod per caller; 0 means
	// DefaultRateLimit per DefaultRateLimitPeriod.
	RateLimit       int
	RateLimitPeriod time.Duration
	// ExchangeFailures failed token exchanges are allowed per
	// ExchangeFailurePeriod from one source address, and as many naming one
	// key id; 0 means DefaultExchangeFailures per DefaultExchangeFailurePeriod.
	ExchangeFailures      int
	ExchangeFailurePeriod time.Duration
}

// The defaults of Settings.
const (
	DefaultTokenTTL              = time.Hour
	DefaultRateLimit             = 10000
	DefaultRateLimitPeriod       = time.Hour
	DefaultExchangeFailures      = 20
	DefaultExchangeFailurePeriod = 10 * time.Minute
)

// withDefaults returns s with every zero field set to its default.
func (s Settings) withDefaults() Settings {
	s.TokenTTL = cmp.Or(s.TokenTTL, DefaultTokenTTL)
	s.RateLimit = cmp.Or(s.RateLimit, DefaultRateLimit)
	s.RateLimitPeriod = cmp.Or(s.RateLimitPeriod, DefaultRateLimitPeriod)
	s.ExchangeFailures = cmp.Or(s.ExchangeFailures, DefaultExchangeFailures)
	s.ExchangeFailurePeriod = cmp.Or(s.ExchangeFailurePeriod, DefaultExchangeFailurePeriod)
	return s
}

// RegisterFlags declares the --pam-* flags of `apistack serve` on fs, bound
// to s and showing the defaults.
func (s *Settings) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.TokenTTL, "pam-token-ttl", DefaultTokenTTL, "lifetime of PAM bearer tokens")
	fs.IntVar(&s.RateLimit, "pam-rate-limit", DefaultRateLimit, "PAM requests allowed per caller per --pam-rate-period")
	fs.DurationVar(&s.RateLimitPeriod, "pam-rate-period", DefaultRateLimitPeriod, "PAM rate-limit period")
	fs.IntVar(&s.ExchangeFailures, "pam-exchange-failures", DefaultExchangeFailures,
		"failed PAM token exchanges allowed per --pam-exchange-failure-period from one source address, and as many naming one key id")
	fs.DurationVar(&s.ExchangeFailurePeriod, "pam-exchange-failure-period", DefaultExchangeFailurePeriod, "PAM failed-exchange limit period")
}
