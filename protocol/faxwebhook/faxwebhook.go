// Package faxwebhook is the receiving side of the fax API's webhooks
// (specs/fax/webhooks.yaml): it verifies a delivery's Ed25519 signature and
// timestamp over the exact bytes received, decodes the typed event, and
// answers as the spec says. Receivers in users' services (through
// clients/fax) and the stack's own inboxes (the demo inbox and each
// sandbox's) are built on it, so both sides share one reading of the
// protocol without the servers importing a client package.
package faxwebhook

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/apistack/apistack/gen/faxwebhooks"
)

// Webhook signature headers and limits.
const (
	// HeaderSignature carries the base64 Ed25519 signature of
	// timestamp + "|" + raw body.
	HeaderSignature = "Webhook-Signature-Ed25519"
	// HeaderTimestamp carries the Unix seconds the attempt was signed at.
	HeaderTimestamp = "Webhook-Timestamp"
	// DefaultTolerance is how far a delivery's timestamp may be from the
	// receiver's clock.
	DefaultTolerance = 5 * time.Minute
	// maxEventBytes caps a delivery's body.
	maxEventBytes = 1 << 20
)

// Event is one verified webhook delivery.
type Event struct {
	// ID identifies the event; a redelivery has the same ID, so it is the key
	// to deduplicate on.
	ID string
	// Type is the event type, e.g. "fax.delivered".
	Type string
	// OccurredAt is when the change the event reports was committed.
	OccurredAt time.Time
	// Attempt and DeliveredTo are the delivery's meta.
	Attempt     int
	DeliveredTo string
	// Value is the typed event, one of faxwebhooks.FaxQueuedEvent,
	// FaxMediaProcessedEvent, FaxSendingStartedEvent, FaxDeliveredEvent,
	// FaxFailedEvent, FaxReceivingStartedEvent,
	// FaxMediaProcessingStartedEvent, FaxReceivedEvent or FaxDeletedEvent.
	Value any
	// FaxID is the payload's fax_id, for every type.
	FaxID string
	// Raw is the request body as received (and verified).
	Raw []byte
}

// Func handles one verified event. Returning an error answers 500, so
// the sender delivers the event again later.
type Func func(ctx context.Context, e Event) error

// Option configures a webhook handler.
type Option func(*webhookReceiver)

// WithTolerance sets how far a delivery's timestamp may be from now
// (default 5 minutes).
func WithTolerance(d time.Duration) Option {
	return func(r *webhookReceiver) { r.tolerance = d }
}

// WithClock sets the clock timestamps are judged by (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(r *webhookReceiver) { r.now = now }
}

// NewHandler returns the http.Handler to mount at an application's
// webhook URL. It verifies each delivery's Ed25519 signature with publicKey
// (the admin API's GET /fax/webhook_public_key) and its timestamp, decodes
// the typed event and hands it to fn. It answers 401 to a forged or stale
// delivery, 400 to a malformed one, 500 when fn fails and 204 when fn
// succeeds. It is the receiver side of specs/fax/webhooks.yaml, written on
// net/http alone so that importing this package compiles no server framework;
// it serves whatever path it is mounted at (the spec's operation is at "/").
func NewHandler(publicKey ed25519.PublicKey, fn Func, opts ...Option) (http.Handler, error) {
	if len(publicKey) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("fax: webhook public key has %d bytes, want %d", len(publicKey), ed25519.PublicKeySize)
	}
	if fn == nil {
		return nil, errors.New("fax: webhook function is nil")
	}
	r := &webhookReceiver{key: publicKey, fn: fn, tolerance: DefaultTolerance, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// ParsePublicKey decodes the base64 public key the admin API and
// demo-credentials.json give.
func ParsePublicKey(b64 string) (ed25519.PublicKey, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, fmt.Errorf("fax: webhook public key: %w", err)
	}
	if len(k) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("fax: webhook public key has %d bytes, want %d", len(k), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(k), nil
}

type webhookReceiver struct {
	key       ed25519.PublicKey
	fn        Func
	tolerance time.Duration
	now       func() time.Time
}

// ServeHTTP checks the signature over the exact bytes received before
// anything decodes them, then decodes the event and hands it to the caller's
// function. Every error answer is the spec's WebhookError JSON.
func (r *webhookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeWebhookError(w, http.StatusMethodNotAllowed, "webhooks are POSTed")
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxEventBytes+1))
	if err != nil {
		writeWebhookError(w, http.StatusBadRequest, "the body cannot be read")
		return
	}
	if len(body) > maxEventBytes {
		writeWebhookError(w, http.StatusRequestEntityTooLarge, "the body is too large")
		return
	}
	if err := VerifySignature(r.key, req.Header.Get(HeaderTimestamp), req.Header.Get(HeaderSignature), body, r.now(), r.tolerance); err != nil {
		writeWebhookError(w, http.StatusUnauthorized, err.Error())
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeWebhookError(w, http.StatusBadRequest, "the body is missing")
		return
	}
	var env faxwebhooks.FaxEvent
	if err := json.Unmarshal(body, &env); err != nil {
		writeWebhookError(w, http.StatusBadRequest, "the body is not a fax event: "+err.Error())
		return
	}
	ev, err := decodeEvent(env)
	if err != nil {
		writeWebhookError(w, http.StatusBadRequest, err.Error())
		return
	}
	ev.Raw = body
	if err := r.fn(req.Context(), ev); err != nil {
		writeWebhookError(w, http.StatusInternalServerError, "the receiver failed to process the event")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func writeWebhookError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(faxwebhooks.WebhookError{Error: msg})
}

// Errors of VerifySignature.
var (
	ErrMissingSignature = errors.New("the Webhook-Timestamp and Webhook-Signature-Ed25519 headers are required")
	ErrBadTimestamp     = errors.New("the Webhook-Timestamp is not Unix seconds")
	ErrStaleTimestamp   = errors.New("the Webhook-Timestamp is outside the tolerance")
	ErrBadSignature     = errors.New("the signature does not match")
)

// VerifySignature checks a delivery: timestamp (the header as received) must
// be within tolerance of now, and signature (base64) must be publicKey's
// Ed25519 signature of timestamp + "|" + body.
func VerifySignature(publicKey ed25519.PublicKey, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	if timestamp == "" || signature == "" {
		return ErrMissingSignature
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return ErrStaleTimestamp
	}
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return ErrBadSignature
	}
	msg := make([]byte, 0, len(timestamp)+1+len(body))
	msg = append(append(append(msg, timestamp...), '|'), body...)
	if !ed25519.Verify(publicKey, msg, sig) {
		return ErrBadSignature
	}
	return nil
}

// eventHeader is what every event type has.
type eventHeader struct {
	EventType  string          `json:"event_type"`
	ID         string          `json:"id"`
	OccurredAt time.Time       `json:"occurred_at"`
	RecordType string          `json:"record_type"`
	Payload    json.RawMessage `json:"payload"`
}

// decodeEvent checks the envelope and decodes its data into the type its
// event_type names, refusing unknown types and fields.
func decodeEvent(env faxwebhooks.FaxEvent) (Event, error) {
	raw, err := env.Data.MarshalJSON()
	if err != nil {
		return Event{}, fmt.Errorf("data: %w", err)
	}
	var h eventHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		return Event{}, fmt.Errorf("data: %w", err)
	}
	if h.ID == "" || h.OccurredAt.IsZero() || h.RecordType != "event" || len(h.Payload) == 0 {
		return Event{}, errors.New("data needs event_type, id, occurred_at, record_type \"event\" and payload")
	}
	if env.Meta.Attempt < 1 || env.Meta.DeliveredTo == "" {
		return Event{}, errors.New("meta needs attempt (from 1) and delivered_to")
	}
	v, err := env.Data.ValueByDiscriminator()
	if err != nil {
		return Event{}, fmt.Errorf("event_type %q: %w", h.EventType, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var faxID string
	var payload struct {
		FaxID string `json:"fax_id"`
	}
	if err := json.Unmarshal(h.Payload, &payload); err != nil || payload.FaxID == "" {
		return Event{}, errors.New("payload needs fax_id")
	}
	faxID = payload.FaxID
	// The discriminator chose the event's generated type; decode the data again
	// into a fresh value of that type, strictly, so unknown fields are refused.
	typed := reflect.New(reflect.TypeOf(v))
	err = dec.Decode(typed.Interface())
	v = typed.Elem().Interface()
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", h.EventType, err)
	}
	return Event{
		ID: h.ID, Type: h.EventType, OccurredAt: h.OccurredAt, Attempt: env.Meta.Attempt,
		DeliveredTo: env.Meta.DeliveredTo, Value: v, FaxID: faxID,
	}, nil
}
