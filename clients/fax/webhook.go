package fax

import (
	"crypto/ed25519"
	"net/http"
	"time"

	"github.com/apistack/apistack/protocol/faxwebhook"
)

// The receiving side of the webhooks is protocol/faxwebhook, shared with the
// stack's own inboxes; these are its names as a client of the fax API reads
// them, and the values are that package's, so they mix freely.

// Webhook signature headers and limits.
const (
	// HeaderSignature carries the base64 Ed25519 signature of
	// timestamp + "|" + raw body.
	HeaderSignature = faxwebhook.HeaderSignature
	// HeaderTimestamp carries the Unix seconds the attempt was signed at.
	HeaderTimestamp = faxwebhook.HeaderTimestamp
	// DefaultTolerance is how far a delivery's timestamp may be from the
	// receiver's clock.
	DefaultTolerance = faxwebhook.DefaultTolerance
)

// Event is one verified webhook delivery: its ID (the key to deduplicate
// on), Type, OccurredAt, the delivery's Attempt and DeliveredTo, the typed
// event in Value, the payload's FaxID and the body as received in Raw.
type Event = faxwebhook.Event

// WebhookFunc handles one verified event. Returning an error answers 500, so
// the sender delivers the event again later.
type WebhookFunc = faxwebhook.Func

// WebhookOption configures a webhook handler.
type WebhookOption = faxwebhook.Option

// Errors of VerifySignature.
var (
	ErrMissingSignature = faxwebhook.ErrMissingSignature
	ErrBadTimestamp     = faxwebhook.ErrBadTimestamp
	ErrStaleTimestamp   = faxwebhook.ErrStaleTimestamp
	ErrBadSignature     = faxwebhook.ErrBadSignature
)

// WithTolerance sets how far a delivery's timestamp may be from now
// (default 5 minutes).
func WithTolerance(d time.Duration) WebhookOption { return faxwebhook.WithTolerance(d) }

// WithClock sets the clock timestamps are judged by (default time.Now).
func WithClock(now func() time.Time) WebhookOption { return faxwebhook.WithClock(now) }

// NewWebhookHandler returns the http.Handler to mount at an application's
// webhook URL. It verifies each delivery's Ed25519 signature with publicKey
// (the admin API's GET /fax/webhook_public_key) and its timestamp, decodes
// the typed event and hands it to fn. It answers 401 to a forged or stale
// delivery, 400 to a malformed one, 500 when fn fails and 204 when fn
// succeeds; it serves whatever path it is mounted at.
func NewWebhookHandler(publicKey ed25519.PublicKey, fn WebhookFunc, opts ...WebhookOption) (http.Handler, error) {
	return faxwebhook.NewHandler(publicKey, fn, opts...)
}

// ParseWebhookPublicKey decodes the base64 public key the admin API and
// demo-credentials.json give.
func ParseWebhookPublicKey(b64 string) (ed25519.PublicKey, error) {
	return faxwebhook.ParsePublicKey(b64)
}

// VerifySignature checks a delivery: timestamp (the header as received) must
// be within tolerance of now, and signature (base64) must be publicKey's
// Ed25519 signature of timestamp + "|" + body.
func VerifySignature(publicKey ed25519.PublicKey, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	return faxwebhook.VerifySignature(publicKey, timestamp, signature, body, now, tolerance)
}
