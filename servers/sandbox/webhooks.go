package sandbox

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/servers/fax"
)

// Webhooks is the fax API's webhook log of the sandboxes' accounts (each
// named after its sandbox); *fax.Operator (a fax server's Operator()) is one.
type Webhooks interface {
	// WebhookAttempts lists the account's delivery attempts after the id
	// after, oldest first, at most limit.
	WebhookAttempts(ctx context.Context, account string, after int64, limit int) ([]fax.LogAttempt, error)
	// PendingWebhookEvents lists the account's events not delivered nor
	// abandoned yet, oldest first, at most limit.
	PendingWebhookEvents(ctx context.Context, account string, limit int) ([]fax.LogEvent, error)
	// RedeliverEventOf queues the account's event eventID again;
	// fax.ErrNotFound when it has none.
	RedeliverEventOf(ctx context.Context, account, eventID string) (fax.LogEvent, error)
	// AttemptRecorded is closed at the next attempt this process records.
	AttemptRecorded() <-chan struct{}
}

var _ Webhooks = (*fax.Operator)(nil)

// The webhook log's page sizes and long-poll bounds.
const (
	defaultWebhookPage = 100
	maxPendingEvents   = 1000
	// MaxWebhookWait is the longest wait of ListSandboxWebhooks.
	MaxWebhookWait = 30 * time.Second
	// webhookPoll is how often a waiting read looks for the attempts other
	// replicas recorded (this replica's wake it at once).
	webhookPoll = 200 * time.Millisecond
)

// InboxPathOf is where the sandbox id's fax webhooks go by default: its
// inbox on the admin port, beside its API (served by servers/stack, which
// verifies each delivery's signature).
func InboxPathOf(id string) string { return "/sandboxes/" + id + "/inbox" }

// TakesDeliveries reports whether id's inbox takes deliveries: the sandbox
// is ready, or still being made. A fixture's or a fork's webhook events are
// queued while the sandbox is made, and the fax server may deliver them
// before the create answers; were they refused then, their retries would wait
// on the sandbox's clock, which stands still in a frozen sandbox. A sandbox
// being deleted, or none, takes none. An id that is not one newID makes (the
// inbox's path is anyone's to write) is no sandbox's, without a lookup: the
// database is never asked about bytes it may refuse (PostgreSQL refuses a
// NUL).
func (s *Server) TakesDeliveries(ctx context.Context, id string) (bool, error) {
	if !wellFormedID(id) {
		return false, nil
	}
	r, err := s.store.get(ctx, id)
	if errors.Is(err, errNoSandbox) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return r.State == stateReady || r.State == stateCreating, nil
}

// webhookLog returns the ready sandbox id the caller controls (recording a
// use) and the webhook log.
func (s *Server) webhookLog(ctx context.Context, id string) (record, Webhooks, error) {
	r, err := s.ready(ctx, id)
	if err != nil {
		return record{}, nil, err
	}
	if s.cfg.Webhooks == nil {
		return record{}, nil, errors.New("sandbox: no webhook log (Config.Webhooks is nil)")
	}
	return r, s.cfg.Webhooks, nil
}

// ListSandboxWebhooks answers the sandbox's webhook log after the cursor,
// waiting up to wait for an attempt when there is none.
func (s *Server) ListSandboxWebhooks(ctx context.Context, req sandboxserver.ListSandboxWebhooksRequestObject) (sandboxserver.ListSandboxWebhooksResponseObject, error) {
	p := req.Params
	limit, after, wait := defaultWebhookPage, int64(0), time.Duration(0)
	if p.Limit != nil {
		limit = *p.Limit
	}
	if p.After != nil {
		after = *p.After
	}
	if p.Wait != nil {
		d, err := time.ParseDuration(*p.Wait)
		if err != nil {
			return nil, errBadRequest("wait %q is not a Go duration such as 10s", *p.Wait)
		}
		if d < 0 || d > MaxWebhookWait {
			return nil, errBadRequest("wait %s is out of range: at most %s", d, MaxWebhookWait)
		}
		wait = d
	}
	r, w, err := s.webhookLog(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	var attempts []fax.LogAttempt
	for {
		recorded := w.AttemptRecorded()
		attempts, err = w.WebhookAttempts(ctx, r.ID, after, limit+1)
		if err != nil {
			return nil, err
		}
		left := time.Until(deadline)
		if len(attempts) > 0 || left <= 0 {
			break
		}
		t := time.NewTimer(min(left, webhookPoll))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-recorded:
			t.Stop()
		case <-t.C:
		}
	}
	pending, err := w.PendingWebhookEvents(ctx, r.ID, maxPendingEvents)
	if err != nil {
		return nil, err
	}
	page := sandboxapi.WebhookLogPage{Data: make([]sandboxapi.WebhookAttempt, 0, len(attempts)), Pending: make([]sandboxapi.WebhookEvent, 0, len(pending))}
	if len(attempts) > limit {
		attempts = attempts[:limit]
		next := attempts[limit-1].ID
		page.NextAfter = &next
	}
	for _, a := range attempts {
		page.Data = append(page.Data, attemptView(a))
	}
	for _, e := range pending {
		page.Pending = append(page.Pending, eventView(e))
	}
	return sandboxserver.ListSandboxWebhooks200JSONResponse(page), nil
}

// RedeliverSandboxWebhook queues one of the sandbox's events again.
func (s *Server) RedeliverSandboxWebhook(ctx context.Context, req sandboxserver.RedeliverSandboxWebhookRequestObject) (sandboxserver.RedeliverSandboxWebhookResponseObject, error) {
	r, w, err := s.webhookLog(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	e, err := w.RedeliverEventOf(ctx, r.ID, req.EventId.String())
	if errors.Is(err, fax.ErrNotFound) {
		return nil, errNotFound("no webhook event %s in sandbox %s", req.EventId, r.ID)
	}
	if err != nil {
		return nil, err
	}
	return sandboxserver.RedeliverSandboxWebhook202JSONResponse(eventView(e)), nil
}

func eventView(e fax.LogEvent) sandboxapi.WebhookEvent {
	out := sandboxapi.WebhookEvent{
		Seq: e.Seq, Id: e.EventID, Type: e.Type, FaxId: e.FaxID, CreatedAt: e.CreatedAt,
		State: sandboxapi.WebhookEventState(e.State()), Attempts: e.Attempts,
		DeliveredAt: e.DeliveredAt, AbandonedAt: e.AbandonedAt,
	}
	if e.RedeliveryOf != 0 {
		of := e.RedeliveryOf
		out.RedeliveryOf = &of
	}
	return out
}

func attemptView(a fax.LogAttempt) sandboxapi.WebhookAttempt {
	out := sandboxapi.WebhookAttempt{
		Seq: a.ID, Event: eventView(a.Event), Attempt: a.Attempt, Target: a.Target, AttemptedAt: a.At,
		Succeeded: a.Succeeded, LatencyMs: float64(a.Latency.Microseconds()) / 1000, NextRetryAt: a.NextRetry,
		Headers: a.Headers, Body: string(a.Body),
	}
	if out.Headers == nil {
		out.Headers = map[string]string{}
	}
	if a.StatusCode != 0 {
		code := a.StatusCode
		out.StatusCode = &code
	}
	if a.Error != "" {
		msg := a.Error
		out.Error = &msg
	}
	return out
}

// wellFormedID reports whether id has the form of a sandbox's id: IDPrefix
// and 16 lower-case hexadecimal digits (newID).
func wellFormedID(id string) bool {
	hexPart, ok := strings.CutPrefix(id, IDPrefix)
	if !ok || len(hexPart) != 16 {
		return false
	}
	for _, c := range hexPart {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
