package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// Console is what the web console reads of the sandboxes, with the admin's
// rights: every sandbox, one sandbox's journal, webhook log and snapshots,
// and its actions (redeliver, snapshot, fork). Reading a sandbox here is
// not a use of it: its TTL is not renewed. It shows no token and no
// credential.
type Console struct {
	s *Server
}

// Console returns the sandboxes' console view.
func (s *Server) Console() *Console { return &Console{s: s} }

// admin is ctx acting with the admin token.
func admin(ctx context.Context) context.Context {
	return context.WithValue(ctx, callerKey{}, &caller{role: roleAdmin})
}

// ConsoleSandbox is one sandbox as the console's list shows it.
type ConsoleSandbox struct {
	ID         string
	CreatedAt  time.Time
	LastUsedAt time.Time
	TTL        time.Duration
	ExpiresAt  time.Time
	// Clock is its clock: mode, time and offset from the stack's time.
	Clock sandboxapi.SandboxClock
	// Faults are its active faults.
	Faults []sandboxapi.Fault
	// Requests counts its journal's entries.
	Requests int
	// Webhooks counts its webhook delivery attempts, up to MaxCounted
	// (WebhooksCapped when there are more).
	Webhooks       int
	WebhooksCapped bool
}

// MaxCounted bounds the webhook attempts ConsoleSandbox counts.
const MaxCounted = 1000

// ErrNoSuchSandbox is returned for an id that is no ready sandbox.
var ErrNoSuchSandbox = errors.New("no such sandbox")

// Sandboxes lists every ready sandbox, newest first.
func (c *Console) Sandboxes(ctx context.Context) ([]ConsoleSandbox, error) {
	rows, err := c.s.store.db.QueryContext(ctx, `SELECT s.id, s.ttl_micros, s.created_at, s.last_used_at,
		(SELECT COALESCE(SUM(j.entries), 0) FROM journal_batches j WHERE j.sandbox_id = s.id)
		FROM sandboxes s WHERE s.state = ? ORDER BY s.created_at DESC, s.id`, stateReady)
	if err != nil {
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	var out []ConsoleSandbox
	for rows.Next() {
		var sb ConsoleSandbox
		var ttl, created, used int64
		if err := rows.Scan(&sb.ID, &ttl, &created, &used, &sb.Requests); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list sandboxes: %w", err)
		}
		sb.TTL, sb.CreatedAt, sb.LastUsedAt = time.Duration(ttl)*time.Microsecond, sqldb.Time(created), sqldb.Time(used)
		sb.ExpiresAt = sb.LastUsedAt.Add(sb.TTL)
		out = append(out, sb)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	rows.Close()
	for i := range out {
		if err := c.fill(ctx, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Sandbox is the sandbox id as the list shows it; ErrNoSuchSandbox when it
// is not a ready sandbox.
func (c *Console) Sandbox(ctx context.Context, id string) (ConsoleSandbox, error) {
	r, err := c.s.store.get(ctx, id)
	if errors.Is(err, errNoSandbox) || (err == nil && r.State != stateReady) {
		return ConsoleSandbox{}, fmt.Errorf("%w: %s", ErrNoSuchSandbox, id)
	}
	if err != nil {
		return ConsoleSandbox{}, err
	}
	sb := ConsoleSandbox{ID: r.ID, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, TTL: r.TTL, ExpiresAt: r.LastUsedAt.Add(r.TTL)}
	if err := c.s.store.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(entries), 0) FROM journal_batches WHERE sandbox_id = ?`, id).Scan(&sb.Requests); err != nil {
		return sb, fmt.Errorf("count the journal of %s: %w", id, err)
	}
	return sb, c.fill(ctx, &sb)
}

// fill reads sb's clock, faults and webhook count.
func (c *Console) fill(ctx context.Context, sb *ConsoleSandbox) error {
	st, err := c.s.store.clock(ctx, sb.ID)
	if err != nil {
		return fmt.Errorf("clock of %s: %w", sb.ID, err)
	}
	sb.Clock = c.s.clockView(st)
	defs, err := c.s.store.faults(ctx, sb.ID, true)
	if err != nil {
		return fmt.Errorf("faults of %s: %w", sb.ID, err)
	}
	for _, d := range defs {
		sb.Faults = append(sb.Faults, faultView(d))
	}
	if w := c.s.cfg.Webhooks; w != nil {
		attempts, err := w.WebhookAttempts(ctx, sb.ID, 0, MaxCounted+1)
		if err != nil {
			return fmt.Errorf("webhook log of %s: %w", sb.ID, err)
		}
		sb.Webhooks, sb.WebhooksCapped = min(len(attempts), MaxCounted), len(attempts) > MaxCounted
	}
	return nil
}

// JournalFilter selects a sandbox's journal entries for the console.
type JournalFilter struct {
	API, Operation string
	// Status is one status (404) or, below 10, a class (4 for 4xx); 0
	// for every status.
	Status int
	// Limit is how many of the newest entries to show.
	Limit int
}

// Journal returns the newest f.Limit entries of the sandbox's journal
// that f selects, newest first.
func (c *Console) Journal(ctx context.Context, id string, f JournalFilter) ([]sandboxapi.JournalEntry, error) {
	jf := journalFilter{API: f.API, Operation: f.Operation, Limit: 1 << 30}
	if f.Status >= 100 {
		jf.Status = f.Status
	}
	entries, _, err := c.s.store.journal(ctx, id, jf)
	if err != nil {
		return nil, err
	}
	out := make([]sandboxapi.JournalEntry, 0, min(len(entries), f.Limit))
	for i := len(entries) - 1; i >= 0 && len(out) < f.Limit; i-- {
		e := entries[i]
		if f.Status > 0 && f.Status < 10 && e.Status/100 != f.Status {
			continue
		}
		out = append(out, entryView(e))
	}
	return out, nil
}

// ConsoleWebhooks is a sandbox's webhook log: its delivery attempts,
// newest first, and its events still pending.
type ConsoleWebhooks struct {
	Attempts []sandboxapi.WebhookAttempt
	Pending  []sandboxapi.WebhookEvent
}

// Webhooks returns the sandbox's newest limit delivery attempts and its
// pending events.
func (c *Console) Webhooks(ctx context.Context, id string, limit int) (ConsoleWebhooks, error) {
	var out ConsoleWebhooks
	w := c.s.cfg.Webhooks
	if w == nil {
		return out, nil
	}
	var all []sandboxapi.WebhookAttempt
	for after := int64(0); ; {
		page, err := w.WebhookAttempts(ctx, id, after, defaultWebhookPage)
		if err != nil {
			return out, err
		}
		for _, a := range page {
			all = append(all, attemptView(a))
		}
		if len(page) < defaultWebhookPage {
			break
		}
		after = page[len(page)-1].ID
	}
	for i := len(all) - 1; i >= 0 && len(out.Attempts) < limit; i-- {
		out.Attempts = append(out.Attempts, all[i])
	}
	pending, err := w.PendingWebhookEvents(ctx, id, maxPendingEvents)
	if err != nil {
		return out, err
	}
	for _, e := range pending {
		out.Pending = append(out.Pending, eventView(e))
	}
	return out, nil
}

// Redeliver queues the sandbox's webhook event eventID again.
func (c *Console) Redeliver(ctx context.Context, id, eventID string) error {
	var uid openapi_types.UUID
	if err := uid.UnmarshalText([]byte(eventID)); err != nil {
		return &ConsoleError{Status: http.StatusBadRequest, Message: fmt.Sprintf("event id %q is not a UUID", eventID)}
	}
	_, err := c.s.RedeliverSandboxWebhook(admin(ctx), sandboxserver.RedeliverSandboxWebhookRequestObject{Id: id, EventId: uid})
	return consoleErr(err)
}

// Snapshots lists the sandbox's live snapshots.
func (c *Console) Snapshots(ctx context.Context, id string) ([]sandboxapi.Snapshot, error) {
	res, err := c.s.ListSandboxSnapshots(admin(ctx), sandboxserver.ListSandboxSnapshotsRequestObject{Id: id})
	if err != nil {
		return nil, consoleErr(err)
	}
	list, ok := res.(sandboxserver.ListSandboxSnapshots200JSONResponse)
	if !ok {
		return nil, fmt.Errorf("list snapshots of %s: answered %T", id, res)
	}
	return list.Data, nil
}

// Snapshot freezes the sandbox's state into a new snapshot (the default
// TTL) and returns its id.
func (c *Console) Snapshot(ctx context.Context, id string) (string, error) {
	res, err := c.s.CreateSandboxSnapshot(admin(ctx), sandboxserver.CreateSandboxSnapshotRequestObject{Id: id, Body: &sandboxapi.CreateSnapshotRequest{}})
	if err != nil {
		return "", consoleErr(err)
	}
	snap, ok := res.(sandboxserver.CreateSandboxSnapshot201JSONResponse)
	if !ok {
		return "", fmt.Errorf("snapshot %s: answered %T", id, res)
	}
	return snap.Id, nil
}

// Fork creates a sandbox from the snapshot snapshotID (new credentials,
// the default TTL and the snapshot's clock mode) and returns its id; its
// token is not kept (the admin token controls it).
func (c *Console) Fork(ctx context.Context, snapshotID string) (string, error) {
	res, err := c.s.CreateSandbox(admin(ctx), sandboxserver.CreateSandboxRequestObject{Body: &sandboxapi.CreateSandboxRequest{Snapshot: &snapshotID}})
	if err != nil {
		return "", consoleErr(err)
	}
	sb, ok := res.(sandboxserver.CreateSandbox201JSONResponse)
	if !ok {
		return "", fmt.Errorf("fork %s: answered %T", snapshotID, res)
	}
	return sb.Id, nil
}

// ConsoleError is an action the sandbox API refused, with its message.
type ConsoleError struct {
	Status  int
	Message string
}

func (e *ConsoleError) Error() string { return e.Message }

// consoleErr turns the API's refusals into ConsoleErrors.
func consoleErr(err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		return &ConsoleError{Status: ae.Status, Message: strings.TrimSpace(ae.Message)}
	}
	return err
}
