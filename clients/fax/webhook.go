package fax

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

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/faxwebhooks"
	"github.com/apistack/apistack/gen/faxwebhooksserver"
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

// WebhookFunc handles one verified event. Returning an error answers 500, so
// the sender delivers the event again later.
type WebhookFunc func(ctx context.Context, e Event) error

// WebhookOption configures a webhook handler.
type WebhookOption func(*webhookReceiver)

// WithTolerance sets how far a delivery's timestamp may be from now
// (default 5 minutes).
func WithTolerance(d time.Duration) WebhookOption {
	return func(r *webhookReceiver) { r.tolerance = d }
}

// WithClock sets the clock timestamps are judged by (default time.Now).
func WithClock(now func() time.Time) WebhookOption {
	return func(r *webhookReceiver) { r.now = now }
}

// NewWebhookHandler returns the http.Handler to mount at an application's
// webhook URL. It verifies each delivery's Ed25519 signature with publicKey
// (the admin API's GET /fax/webhook_public_key) and its timestamp, decodes
// the typed event and hands it to fn. It answers 401 to a forged or stale
// delivery, 400 to a malformed one, 500 when fn fails and 204 when fn
// succeeds. It is the receiver side of specs/fax/webhooks.yaml: it implements
// the generated strict server interface.
func NewWebhookHandler(publicKey ed25519.PublicKey, fn WebhookFunc, opts ...WebhookOption) (http.Handler, error) {
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
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status, msg := http.StatusInternalServerError, "internal error"
		var he *echo.HTTPError
		if errors.As(err, &he) {
			status, msg = he.Code, fmt.Sprint(he.Message)
		}
		_ = c.JSON(status, faxwebhooks.WebhookError{Error: msg})
	}
	e.Use(r.verify)
	faxwebhooksserver.RegisterHandlers(e, faxwebhooksserver.NewStrictHandler(r, nil))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// The handler serves whatever path it is mounted at; the spec's
		// operation is at "/".
		req2 := req.Clone(req.Context())
		req2.URL.Path, req2.URL.RawPath = "/", ""
		e.ServeHTTP(w, req2)
	}), nil
}

// ParseWebhookPublicKey decodes the base64 public key the admin API and
// demo-credentials.json give.
func ParseWebhookPublicKey(b64 string) (ed25519.PublicKey, error) {
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
	fn        WebhookFunc
	tolerance time.Duration
	now       func() time.Time
}

var _ faxwebhooksserver.StrictServerInterface = (*webhookReceiver)(nil)

type rawBodyKey struct{}

// verify checks the signature over the exact bytes received before anything
// decodes them, then hands the same bytes on.
func (r *webhookReceiver) verify(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Method != http.MethodPost {
			return echo.NewHTTPError(http.StatusMethodNotAllowed, "webhooks are POSTed")
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, maxEventBytes+1))
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, "the body cannot be read")
		}
		if len(body) > maxEventBytes {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "the body is too large")
		}
		if err := VerifySignature(r.key, req.Header.Get(HeaderTimestamp), req.Header.Get(HeaderSignature), body, r.now(), r.tolerance); err != nil {
			return echo.NewHTTPError(http.StatusUnauthorized, err.Error())
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		c.SetRequest(req.WithContext(context.WithValue(req.Context(), rawBodyKey{}, body)))
		return next(c)
	}
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

// ReceiveFaxEvent decodes a verified event and hands it to the caller's
// function.
func (r *webhookReceiver) ReceiveFaxEvent(ctx context.Context, req faxwebhooksserver.ReceiveFaxEventRequestObject) (faxwebhooksserver.ReceiveFaxEventResponseObject, error) {
	if req.Body == nil {
		return faxwebhooksserver.ReceiveFaxEvent400JSONResponse{Error: "the body is missing"}, nil
	}
	ev, err := decodeEvent(*req.Body)
	if err != nil {
		return faxwebhooksserver.ReceiveFaxEvent400JSONResponse{Error: err.Error()}, nil
	}
	ev.Raw, _ = ctx.Value(rawBodyKey{}).([]byte)
	if err := r.fn(ctx, ev); err != nil {
		return faxwebhooksserver.ReceiveFaxEvent500JSONResponse{Error: "the receiver failed to process the event"}, nil
	}
	return faxwebhooksserver.ReceiveFaxEvent204Response{}, nil
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
