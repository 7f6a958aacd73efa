package fax

import (
	"cmp"
	"flag"
	"time"
)

// Settings are the fax server's knobs: the one place each is declared, with
// its default. The zero value of a field means its default. `apistack serve`
// binds its --fax-* flags to them (RegisterFlags); the stack
// (servers/stack) and the test kit (apistacktest) take them as they are.
type Settings struct {
	// StepInterval spaces the simulator's steps; 0 runs them back to back
	// (the server's own tests). `apistack serve` and the test kit space
	// them DefaultStepInterval apart unless told otherwise.
	StepInterval time.Duration
	// Destinations is the policy of the URLs tenants choose: media_url
	// (every redirect hop) and the webhook URLs. The zero value reaches
	// public addresses only; AllowDestinations adds exact URLs (the demo's
	// own inbox and sample document), and AllowPrivate opens every address
	// (tests on loopback, a private deployment).
	Destinations DestinationOptions
	// MediaTimeout bounds the download of a fax document, body included;
	// 0 means DefaultMediaTimeout.
	MediaTimeout time.Duration
	// WebhookTimeout bounds one delivery attempt; 0 means
	// DefaultWebhookTimeout.
	WebhookTimeout time.Duration
	// WebhookAttempts is how many times an event is tried on each URL (the
	// webhook URL, then the failover URL); 0 means DefaultWebhookAttempts.
	WebhookAttempts int
	// WebhookBackoff is the first retry delay, doubled (with jitter) per
	// attempt up to WebhookMaxBackoff; 0 means DefaultWebhookBackoff and
	// DefaultWebhookMaxBackoff.
	WebhookBackoff    time.Duration
	WebhookMaxBackoff time.Duration
	// WebhookConcurrency is how many faxes' events are delivered at once; 0
	// means DefaultWebhookConcurrency. Events of one fax are always
	// delivered one after another.
	WebhookConcurrency int
	// Lease is how long a replica's claim on a due step or on a fax's
	// events lasts before another replica may take the work over (the
	// claimer died). A replica extends its claim while it retries a
	// delivery. It must exceed MediaTimeout and WebhookTimeout; 0 means
	// DefaultLease, or twice the longer of them when that is more.
	Lease time.Duration
}

// The defaults of Settings (DefaultStepInterval: serve's and the kit's).
const (
	DefaultStepInterval       = time.Second
	DefaultMediaTimeout       = 10 * time.Second
	DefaultWebhookTimeout     = 10 * time.Second
	DefaultWebhookAttempts    = 5
	DefaultWebhookBackoff     = time.Second
	DefaultWebhookMaxBackoff  = time.Minute
	DefaultWebhookConcurrency = 32
	DefaultLease              = 30 * time.Second
)

// withDefaults returns s with every zero field but StepInterval set to its
// default.
func (s Settings) withDefaults() Settings {
	s.MediaTimeout = cmp.Or(s.MediaTimeout, DefaultMediaTimeout)
	s.WebhookTimeout = cmp.Or(s.WebhookTimeout, DefaultWebhookTimeout)
	s.WebhookAttempts = cmp.Or(s.WebhookAttempts, DefaultWebhookAttempts)
	s.WebhookBackoff = cmp.Or(s.WebhookBackoff, DefaultWebhookBackoff)
	s.WebhookMaxBackoff = cmp.Or(s.WebhookMaxBackoff, DefaultWebhookMaxBackoff)
	s.WebhookConcurrency = cmp.Or(s.WebhookConcurrency, DefaultWebhookConcurrency)
	s.Lease = cmp.Or(s.Lease, max(DefaultLease, 2*s.MediaTimeout, 2*s.WebhookTimeout))
	return s
}

// RegisterFlags declares the --fax-* flags of `apistack serve` on fs, bound
// to s and showing the defaults.
func (s *Settings) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.StepInterval, "fax-step-interval", DefaultStepInterval, "time between the fax simulator's steps")
	fs.BoolVar(&s.Destinations.AllowPrivate, "fax-allow-private-destinations", false, "let media_url and webhook URLs reach loopback, private and other non-public addresses (default: public only, plus the admin port's demo sample and inbox)")
	fs.DurationVar(&s.MediaTimeout, "fax-media-timeout", DefaultMediaTimeout, "longest download of a fax document (media_url), body included")
	fs.DurationVar(&s.WebhookTimeout, "fax-webhook-timeout", DefaultWebhookTimeout, "longest fax webhook delivery attempt")
	fs.IntVar(&s.WebhookAttempts, "fax-webhook-attempts", DefaultWebhookAttempts, "how many times a fax webhook event is tried on each URL (the webhook URL, then the failover URL)")
	fs.DurationVar(&s.WebhookBackoff, "fax-webhook-backoff", DefaultWebhookBackoff, "first fax webhook retry delay, doubled (with jitter) per attempt up to --fax-webhook-max-backoff")
	fs.DurationVar(&s.WebhookMaxBackoff, "fax-webhook-max-backoff", DefaultWebhookMaxBackoff, "longest fax webhook retry delay")
	fs.IntVar(&s.WebhookConcurrency, "fax-webhook-concurrency", DefaultWebhookConcurrency, "how many faxes' webhook events are delivered at once")
	fs.DurationVar(&s.Lease, "fax-lease", 0, "how long a replica's claim on fax work lasts before another replica takes it over; must exceed --fax-media-timeout and --fax-webhook-timeout (0: 30s, or twice the longer of them)")
}
