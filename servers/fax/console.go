package fax

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"time"
)

// The web console's view of the fax service (servers/console): faxes with
// their state timelines, webhook events and each delivery attempt, and the
// redeliver action. Like the admin calls, these bypass API keys.

// ConsoleFax is a fax as the console shows it.
type ConsoleFax struct {
	ID, Direction, From, To, Status string
	FailureReason                   string
	PageCount                       int
	CreatedAt, UpdatedAt            time.Time
	// Final reports a state the simulator no longer moves the fax from.
	Final bool
	// Timeline is every state the fax went through, oldest first, as its
	// events reported them.
	Timeline []Transition
	// Events are the fax's webhook events (redeliveries included), oldest
	// first.
	Events []WebhookEvent
}

// Transition is one state of a fax's timeline.
type Transition struct {
	Status string
	At     time.Time
}

// WebhookEvent is one event of the outbox and its delivery.
type WebhookEvent struct {
	Seq       int64
	EventID   string
	Type      string
	CreatedAt time.Time
	// Attempts counts the POSTs made.
	Attempts int
	// DeliveredAt and DeliveredTo (redacted) are set once a receiver
	// acknowledged; AbandonedAt once every retry failed.
	DeliveredAt *time.Time
	DeliveredTo string
	AbandonedAt *time.Time
	// RedeliveryOf is the seq of the event this one repeats (0: none).
	RedeliveryOf int64
	// AttemptLog is every recorded POST, oldest first.
	AttemptLog []DeliveryAttempt
}

// State is "delivered", "abandoned" or "pending".
func (e WebhookEvent) State() string {
	switch {
	case e.DeliveredAt != nil:
		return "delivered"
	case e.AbandonedAt != nil:
		return "abandoned"
	}
	return "pending"
}

// DeliveryAttempt is one POST of a webhook event.
type DeliveryAttempt struct {
	Attempt int
	// Target is the URL without its query and user info.
	Target     string
	At         time.Time
	StatusCode int // 0: no answer
	Error      string
	Latency    time.Duration
	NextRetry  *time.Time
	Succeeded  bool
	// Headers are the headers sent, signature included (the signing key is
	// never shown).
	Headers map[string]string
}

// Console is what the web console (servers/console) reads of a fax server,
// and its redelivery. Server.Console gives a server's.
type Console Server

// Console is the console's view of s.
func (s *Server) Console() *Console { return (*Console)(s) }

// Accounts lists every account, oldest first.
func (s *Console) Accounts(ctx context.Context) ([]Account, error) {
	out, err := apistore.Collect(ctx, s.store.db, func(rows *sql.Rows, a *Account) error {
		return rows.Scan(&a.ID, &a.Name, sqldb.TimeInto(&a.CreatedAt))
	}, `SELECT id, name, created_at FROM accounts ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return out, nil
}

// Faxes returns the account's latest limit faxes, newest first, with
// their timelines, events and attempts.
func (s *Console) Faxes(ctx context.Context, accountID string, limit int) ([]ConsoleFax, error) {
	rows, _, err := s.store.listFaxes(ctx, accountID, faxFilter{}, 0, limit)
	if err != nil {
		return nil, err
	}
	out := make([]ConsoleFax, 0, len(rows))
	for _, f := range rows {
		cf, err := s.consoleFax(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, cf)
	}
	return out, nil
}

// Fax returns one fax of any account; ErrNotFound when there is none
// (or it was deleted).
func (s *Console) Fax(ctx context.Context, id string) (ConsoleFax, error) {
	f, err := scanFax(s.store.db.QueryRowContext(ctx, `SELECT `+faxColumns+` FROM faxes WHERE id = ? AND deleted_at IS NULL`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ConsoleFax{}, storeerr.ErrNotFound
	}
	if err != nil {
		return ConsoleFax{}, fmt.Errorf("read fax: %w", err)
	}
	return s.consoleFax(ctx, f)
}

func (s *Console) consoleFax(ctx context.Context, f faxRow) (ConsoleFax, error) {
	cf := ConsoleFax{
		ID: f.ID, Direction: f.Direction, From: f.From, To: f.To, Status: f.Status,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt, Final: isFinal(f.Status),
	}
	if f.FailureReason != nil {
		cf.FailureReason = *f.FailureReason
	}
	if f.PageCount != nil {
		cf.PageCount = *f.PageCount
	}
	events, err := s.store.faxEvents(ctx, f.ID)
	if err != nil {
		return ConsoleFax{}, err
	}
	attempts, err := s.store.attempts(ctx, f.ID)
	if err != nil {
		return ConsoleFax{}, err
	}
	for _, e := range events {
		if e.status != "" && e.RedeliveryOf == 0 {
			cf.Timeline = append(cf.Timeline, Transition{Status: e.status, At: e.occurredAt})
		}
		e.AttemptLog = attempts[e.Seq]
		cf.Events = append(cf.Events, e.WebhookEvent)
	}
	return cf, nil
}

// storedEvent is an outbox row with the fax status its data reports.
type storedEvent struct {
	WebhookEvent
	status     string
	occurredAt time.Time
}

func (s *store) faxEvents(ctx context.Context, faxID string) ([]storedEvent, error) {
	out, err := apistore.Collect(ctx, s.db, func(rows *sql.Rows, e *storedEvent) error {
		var fax string
		return scanEvent(rows, e, &fax)
	}, `SELECT `+logEventColumns+` FROM outbox o WHERE o.fax_id = ? ORDER BY o.seq`, faxID)
	if err != nil {
		return nil, fmt.Errorf("fax events: %w", err)
	}
	return out, nil
}

// scanEvent reads a row of logEventColumns into e and faxID.
func scanEvent(row interface{ Scan(...any) error }, e *storedEvent, faxID *string) error {
	c := eventCols{e: e, faxID: faxID}
	if err := row.Scan(c.dest()...); err != nil {
		return err
	}
	c.finish()
	return nil
}

// eventCols scans logEventColumns into e and faxID.
type eventCols struct {
	e                    *storedEvent
	faxID                *string
	data                 []byte
	created              int64
	delivered, abandoned sql.NullInt64
}

func (c *eventCols) dest() []any {
	e := c.e
	return []any{&e.Seq, &e.EventID, &e.Type, &c.data, &e.Attempts, &c.created, &c.delivered, &e.DeliveredTo, &c.abandoned, &e.RedeliveryOf, c.faxID}
}

// finish fills in what the columns scanned into c say: the times, the
// redacted delivery URL, and from the event's data its id (a redelivery's
// row has its own), occurred_at and the fax status it reports.
func (c *eventCols) finish() {
	e := c.e
	e.CreatedAt, e.occurredAt = sqldb.Time(c.created), sqldb.Time(c.created)
	if c.delivered.Valid {
		t := sqldb.Time(c.delivered.Int64)
		e.DeliveredAt = &t
	}
	if c.abandoned.Valid {
		t := sqldb.Time(c.abandoned.Int64)
		e.AbandonedAt = &t
	}
	e.DeliveredTo = redactURL(e.DeliveredTo)
	if e.DeliveredAt == nil {
		e.DeliveredTo = ""
	}
	var body struct {
		ID         string `json:"id"`
		OccurredAt string `json:"occurred_at"`
		Payload    struct {
			Status string `json:"status"`
		} `json:"payload"`
	}
	if json.Unmarshal(c.data, &body) == nil {
		e.status = body.Payload.Status
		if body.ID != "" {
			e.EventID = body.ID
		}
		if t, err := time.Parse(EventTimeLayout, body.OccurredAt); err == nil {
			e.occurredAt = t
		}
	}
}

// attempts returns the fax's recorded attempts by event seq, oldest first.
func (s *store) attempts(ctx context.Context, faxID string) (map[int64][]DeliveryAttempt, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+attemptColumns+` FROM delivery_attempts a WHERE a.fax_id = ? ORDER BY a.event_seq, a.id`, faxID)
	if err != nil {
		return nil, fmt.Errorf("delivery attempts: %w", err)
	}
	defer rows.Close()
	out := map[int64][]DeliveryAttempt{}
	for rows.Next() {
		var a DeliveryAttempt
		var seq int64
		var headers string
		c := attemptCols{a: &a, seq: &seq, headers: &headers}
		if err := rows.Scan(c.dest()...); err != nil {
			return nil, fmt.Errorf("delivery attempts: %w", err)
		}
		if err := c.finish(); err != nil {
			return nil, err
		}
		out[seq] = append(out[seq], a)
	}
	return out, rows.Err()
}

// Redeliver queues the outbox event seq again, whatever became of it: a new
// outbox row with the same data (the receiver sees the same event id, as a
// resend from a provider's dashboard does), sent to the fax's current
// webhook URLs, its attempt numbers continuing the original's. The original
// row keeps its history. It returns the new row's seq; ErrNotFound when
// there is no such event.
func (s *Console) Redeliver(ctx context.Context, seq int64) (int64, error) {
	return (*Server)(s).redeliver(ctx, seq, nil)
}

// redeliver queues a copy of the outbox event seq (see Console.Redeliver)
// and wakes the delivery worker. read, when not nil, runs in the same
// transaction once the copy is inserted, so what it reads is the copy as
// queued, before any worker can see it.
func (s *Server) redeliver(ctx context.Context, seq int64, read func(tx *sqldb.Tx, newSeq int64) error) (int64, error) {
	tx, err := s.store.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("redeliver: %w", err)
	}
	defer tx.Rollback()
	var e outboxEvent
	var created int64
	err = tx.QueryRowContext(ctx, `SELECT o.event_id, o.fax_id, o.event_type, o.data, COALESCE(f.webhook_url, o.webhook_url),
		COALESCE(f.webhook_failover_url, o.failover_url), o.attempts, o.created_at
		FROM outbox o LEFT JOIN faxes f ON f.id = o.fax_id WHERE o.seq = ?`+s.store.lockClause(" FOR UPDATE OF o"), seq).
		Scan(&e.EventID, &e.FaxID, &e.Type, &e.Data, &e.WebhookURL, &e.FailoverURL, &e.Attempts, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("event %d: %w", seq, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("redeliver: %w", err)
	}
	var copies int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE redelivery_of = ?`, seq).Scan(&copies); err != nil {
		return 0, fmt.Errorf("redeliver: %w", err)
	}
	// The original's row is locked (PostgreSQL): concurrent redeliveries of
	// one event count each other's copies.
	// event_id is unique in the outbox: the copy's row gets its own, while
	// the body it sends keeps the event's id.
	// RETURNING, not LastInsertId: PostgreSQL's driver has none.
	var newSeq int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO outbox (event_id, fax_id, event_type, data, webhook_url, failover_url, attempts, created_at, redelivery_of)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`, fmt.Sprintf("%s/redelivery/%d", e.EventID, copies+1), e.FaxID, e.Type, e.Data,
		e.WebhookURL, e.FailoverURL, e.Attempts, sqldb.Micros(s.now()), seq).Scan(&newSeq); err != nil {
		return 0, fmt.Errorf("redeliver: %w", err)
	}
	if read != nil {
		if err := read(tx, newSeq); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("redeliver: %w", err)
	}
	s.wakeDelivery()
	return newSeq, nil
}
