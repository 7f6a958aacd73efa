package fax

import (
	"cmp"
	"time"

	"github.com/apistack/apistack/servers/internal/descriptor"
)

// Settings are the fax server's knobs: the one place each is declared, with
// its default and its flag of `apistack serve` (tags read by
// servers/internal/descriptor). The zero value of a field means its
// default. The stack (servers/stack), serve and the test kit (apistacktest)
// take them as they are.
type Settings struct {
	// StepInterval spaces the simulator's steps; 0 runs them back to back
	// (the server's own tests). `apistack serve` and the test kit space
	// them DefaultStepInterval apart unless told otherwise.
	StepInterval time.Duration `flag:"fax-step-interval" serve:"1s" help:"time between the fax simulator's steps"`
	// Destinations is the policy of the URLs tenants choose: media_url
	// (every redirect hop) and the webhook URLs. The zero value reaches
	// public addresses only; AllowDestinations adds exact URLs (the demo's
	// own inbox and sample document), and AllowPrivate
	// (--fax-allow-private-destinations) opens every address (tests on
	// loopback, a private deployment).
	Destinations DestinationOptions
	// MediaTimeout bounds the download of a fax document, body included.
	MediaTimeout time.Duration `flag:"fax-media-timeout" default:"10s" help:"longest download of a fax document (media_url), body included"`
	// WebhookTimeout bounds one delivery attempt.
	WebhookTimeout time.Duration `flag:"fax-webhook-timeout" default:"10s" help:"longest fax webhook delivery attempt"`
	// WebhookAttempts is how many times an event is tried on each URL (the
	// webhook URL, then the failover URL).
	WebhookAttempts int `flag:"fax-webhook-attempts" default:"5" help:"how many times a fax webhook event is tried on each URL (the webhook URL, then the failover URL)"`
	// WebhookBackoff is the first retry delay, doubled (with jitter) per
	// attempt up to WebhookMaxBackoff.
	WebhookBackoff    time.Duration `flag:"fax-webhook-backoff" default:"1s" help:"first fax webhook retry delay, doubled (with jitter) per attempt up to --fax-webhook-max-backoff"`
	WebhookMaxBackoff time.Duration `flag:"fax-webhook-max-backoff" default:"1m" help:"longest fax webhook retry delay"`
	// WebhookConcurrency is how many faxes' events are delivered at once.
	// Events of one fax are always delivered one after another.
	WebhookConcurrency int `flag:"fax-webhook-concurrency" default:"32" help:"how many faxes' webhook events are delivered at once"`
	// Lease is how long a replica's claim on a due step or on a fax's
	// events lasts before another replica may take the work over (the
	// claimer died). A replica extends its claim while it retries a
	// delivery. It must exceed MediaTimeout and WebhookTimeout; 0 means 30s,
	// or twice the longer of them when that is more.
	// RateLimit is how many requests each account may make per
	// RateLimitPeriod, refilled continuously, in bursts of as many; past it
	// a request answers 429 with Retry-After.
	RateLimit       int           `flag:"fax-rate-limit" default:"1200" help:"how many fax API requests each account may make per --fax-rate-limit-period, in bursts of as many; past it a request answers 429"`
	RateLimitPeriod time.Duration `flag:"fax-rate-limit-period" default:"1m" help:"the period of --fax-rate-limit"`
	Lease           time.Duration `flag:"fax-lease" help:"how long a replica's claim on fax work lasts before another replica takes it over; must exceed --fax-media-timeout and --fax-webhook-timeout (0: 30s, or twice the longer of them)"`
}

// DefaultStepInterval spaces the simulator's steps under `apistack serve`
// and the test kit (Settings.StepInterval; a test holds its flag to it).
const DefaultStepInterval = time.Second

// minLease is the shortest Lease a zero one means.
const minLease = 30 * time.Second

// withDefaults returns s with its zero fields set to their defaults.
func (s Settings) withDefaults() Settings {
	descriptor.ApplyDefaults(&s)
	s.Lease = cmp.Or(s.Lease, max(minLease, 2*s.MediaTimeout, 2*s.WebhookTimeout))
	return s
}
