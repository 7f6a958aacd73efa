package pam

import "time"

// Settings are the PAM server's knobs: the one place each is declared, with
// its default and its flag of `apistack serve` (tags read by
// servers/internal/descriptor). The zero value of a field means its
// default. The stack (servers/stack), serve, the test kit (apistacktest) and
// the harness (pamtest) take them as they are.
type Settings struct {
	// TokenTTL is the lifetime of a bearer token.
	TokenTTL time.Duration `flag:"pam-token-ttl" default:"1h" help:"lifetime of PAM bearer tokens"`
	// RateLimit requests are allowed per RateLimitPeriod per caller.
	RateLimit       int           `flag:"pam-rate-limit" default:"10000" help:"PAM requests allowed per caller per --pam-rate-period"`
	RateLimitPeriod time.Duration `flag:"pam-rate-period" default:"1h" help:"PAM rate-limit period"`
	// ExchangeFailures failed token exchanges are allowed per
	// ExchangeFailurePeriod from one source address, and as many naming one
	// key id.
	ExchangeFailures      int           `flag:"pam-exchange-failures" default:"20" help:"failed PAM token exchanges allowed per --pam-exchange-failure-period from one source address, and as many naming one key id"`
	ExchangeFailurePeriod time.Duration `flag:"pam-exchange-failure-period" default:"10m" help:"PAM failed-exchange limit period"`
}
