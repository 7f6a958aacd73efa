package fax

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// The webhook log of an account (the sandbox API's GET
// /sandboxes/{id}/webhooks): every delivery attempt of its faxes' events,
// read by attempt id after a cursor, each with its event, the signed
// headers and the exact body sent; and the events still waiting for one.

// attemptLogLock is the first key of the transaction-scoped advisory lock
// under which an account's attempts are recorded on PostgreSQL (the second
// is the hash of the account's id).
const attemptLogLock = "731907"

// LogEvent is a webhook event of an account's log: an outbox row.
type LogEvent struct {
	WebhookEvent
	// FaxID is the fax the event is about.
	FaxID string
}

// LogAttempt is one POST of an event, as the webhook log shows it.
type LogAttempt struct {
	// ID orders the log: an attempt recorded later has a larger one.
	ID int64
	DeliveryAttempt
	// Body is what was POSTed, as signed; nil for an attempt that sent
	// nothing (its stored event was unusable).
	Body []byte
	// Event is the attempt's event, as it is now.
	Event LogEvent
}

// AttemptRecorded returns a channel closed once this process records its
// next delivery attempt (of any account). Other replicas' attempts are seen
// by reading the log again.
func (s *Operator) AttemptRecorded() <-chan struct{} { return s.store.attemptLog.wait() }

const logEventColumns = `o.seq, o.event_id, o.event_type, o.data, o.attempts, o.created_at, o.delivered_at,
	COALESCE(o.delivered_to, ''), o.abandoned_at, COALESCE(o.redelivery_of, 0), o.fax_id`

// ofAccount selects the ids of the faxes of the account named by the
// query's first argument.
const ofAccount = `(SELECT f.id FROM faxes f JOIN accounts c ON c.id = f.account_id WHERE c.name = ?)`

// WebhookAttempts returns the delivery attempts of the events of the
// account named account whose ID is above after, oldest first, at most
// limit.
func (s *Operator) WebhookAttempts(ctx context.Context, account string, after int64, limit int) ([]LogAttempt, error) {
	out, err := apistore.Collect(ctx, s.store.db, func(rows *sql.Rows, a *LogAttempt) error {
		var seq int64
		var ev storedEvent
		var headers string
		ac := attemptCols{a: &a.DeliveryAttempt, seq: &seq, headers: &headers}
		ec := eventCols{e: &ev, faxID: &a.Event.FaxID}
		if err := rows.Scan(append(append([]any{&a.ID}, ac.dest()...), append([]any{&a.Body}, ec.dest()...)...)...); err != nil {
			return err
		}
		ec.finish()
		a.Event.WebhookEvent = ev.WebhookEvent
		return ac.finish()
	}, `SELECT a.id, `+attemptColumns+`, a.body, `+logEventColumns+`
		FROM delivery_attempts a JOIN outbox o ON o.seq = a.event_seq
		WHERE a.fax_id IN `+ofAccount+` AND a.id > ? ORDER BY a.id LIMIT ?`, account, after, limit)
	if err != nil {
		return nil, fmt.Errorf("webhook log: %w", err)
	}
	return out, nil
}

// PendingWebhookEvents returns the events of the account named account not
// yet delivered nor abandoned, oldest first, at most limit.
func (s *Operator) PendingWebhookEvents(ctx context.Context, account string, limit int) ([]LogEvent, error) {
	out, err := apistore.Collect(ctx, s.store.db, func(rows *sql.Rows, e *LogEvent) error { return scanLogEvent(rows, e) }, `SELECT `+logEventColumns+` FROM outbox o
		WHERE o.fax_id IN `+ofAccount+` AND o.delivered_at IS NULL AND o.abandoned_at IS NULL ORDER BY o.seq LIMIT ?`, account, limit)
	if err != nil {
		return nil, fmt.Errorf("pending webhook events: %w", err)
	}
	return out, nil
}

// scanLogEvent reads a row of logEventColumns into e.
func scanLogEvent(row interface{ Scan(...any) error }, e *LogEvent) error {
	var ev storedEvent
	if err := scanEvent(row, &ev, &e.FaxID); err != nil {
		return err
	}
	e.WebhookEvent = ev.WebhookEvent
	return nil
}

// RedeliverEventOf queues the event eventID of the account named account
// again (Console.Redeliver): its original outbox row is copied, and the copy is
// sent with fresh signatures. ErrNotFound when the account has no such
// event.
func (s *Operator) RedeliverEventOf(ctx context.Context, account, eventID string) (LogEvent, error) {
	var seq int64
	err := s.store.db.QueryRowContext(ctx, `SELECT o.seq FROM outbox o WHERE o.event_id = ? AND o.redelivery_of IS NULL
		AND o.fax_id IN `+ofAccount, eventID, account).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return LogEvent{}, fmt.Errorf("event %s: %w", eventID, ErrNotFound)
	}
	if err != nil {
		return LogEvent{}, fmt.Errorf("redeliver: %w", err)
	}
	// The answer is the copy as queued, read in the transaction that
	// inserts it: no delivery attempt can have raced the read.
	var e LogEvent
	_, err = s.server().redeliver(ctx, seq, func(tx *sqldb.Tx, copySeq int64) error {
		if err := scanLogEvent(tx.QueryRowContext(ctx, `SELECT `+logEventColumns+` FROM outbox o WHERE o.seq = ?`, copySeq), &e); err != nil {
			return fmt.Errorf("redeliver: read the copy: %w", err)
		}
		return nil
	})
	if err != nil {
		return LogEvent{}, err
	}
	return e, nil
}

// attemptColumns are a delivery_attempts row (a) as attemptCols scans it.
const attemptColumns = `a.event_seq, a.attempt, a.target, a.attempted_at, COALESCE(a.status_code, 0), a.error, a.latency_micros,
	a.next_retry_at, a.headers, a.succeeded`

// attemptCols scans attemptColumns into a.
type attemptCols struct {
	a           *DeliveryAttempt
	seq         *int64
	headers     *string
	at, latency int64
	next        sql.NullInt64
}

func (c *attemptCols) dest() []any {
	a := c.a
	return []any{c.seq, &a.Attempt, &a.Target, &c.at, &a.StatusCode, &a.Error, &c.latency, &c.next, c.headers, &a.Succeeded}
}

func (c *attemptCols) finish() error {
	a := c.a
	a.At, a.Latency = sqldb.Time(c.at), time.Duration(c.latency)*time.Microsecond
	if c.next.Valid {
		t := sqldb.Time(c.next.Int64)
		a.NextRetry = &t
	}
	if err := json.Unmarshal([]byte(*c.headers), &a.Headers); err != nil {
		return fmt.Errorf("delivery attempt headers: %w", err)
	}
	return nil
}
