package fax

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"net/url"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/apistack/apistack/servers/clock"
)

// attemptRecord is one POST of a webhook event, as the delivery_attempts
// table keeps it.
type attemptRecord struct {
	EventSeq   int64
	FaxID      string
	Attempt    int
	Target     string    // redacted: no query, no user info
	At         time.Time // in the clock of the fax's tenant
	sentAt     time.Time // in the stack's clock: the latency's start
	StatusCode int       // 0: no answer
	Error      string
	Latency    time.Duration
	NextRetry  *time.Time
	Headers    map[string]string
	Succeeded  bool
	// Body is what was POSTed, exactly as signed (nil: nothing was sent).
	Body []byte
}

// sent notes the request's start (on the tenant's clock and the stack's),
// its signed headers and its body.
func (r *attemptRecord) sent(at, stackAt time.Time, signature, timestamp string, body []byte) {
	r.At, r.sentAt, r.Body = at, stackAt, body
	r.Headers = map[string]string{
		"Content-Type":  "application/json",
		"User-Agent":    "apistack-fax-webhooks/2",
		HeaderSignature: signature,
		HeaderTimestamp: timestamp,
	}
}

// peekBackOff lets an attempt learn the delay backoff.Retry will wait after
// it fails, before Retry asks for it: the delay is drawn once, at the first
// peek or NextBackOff call, and handed to both.
type peekBackOff struct {
	backoff.BackOff
	next   time.Duration
	peeked bool
}

func (p *peekBackOff) peek() time.Duration {
	if !p.peeked {
		p.next, p.peeked = p.BackOff.NextBackOff(), true
	}
	return p.next
}

// NextBackOff returns the peeked delay, or draws one.
func (p *peekBackOff) NextBackOff() time.Duration {
	d := p.peek()
	p.peeked = false
	return d
}

// Reset resets the wrapped back-off and forgets a peeked delay.
func (p *peekBackOff) Reset() {
	p.peeked = false
	p.BackOff.Reset()
}

// recordAttempt stores rec once post returned err; tries is the number of
// tries made on rec.Target so far. A failed try that backoff.Retry will
// repeat gets its next retry time. Nothing is recorded when ctx ended (the
// process is stopping and the attempt was cut short). A failure to record is
// logged: the delivery goes on.
func (d *delivery) recordAttempt(ctx context.Context, clk clock.Clock, rec *attemptRecord, err error, pb *peekBackOff, tries int) {
	if ctx.Err() != nil {
		return
	}
	s := d.s
	now := clk.Now()
	if rec.At.IsZero() {
		rec.At, rec.sentAt = now, s.clock.Now() // failed before sending (an unusable stored event)
	}
	rec.Latency = s.clock.Now().Sub(rec.sentAt)
	rec.Succeeded = err == nil
	if err != nil {
		rec.Error = attemptError(err)
		var permanent *backoff.PermanentError
		if !errors.As(err, &permanent) && tries < s.cfg.WebhookAttempts {
			if next := pb.peek(); next != backoff.Stop {
				t := now.Add(next)
				rec.NextRetry = &t
			}
		}
	}
	if rerr := s.store.insertAttempt(ctx, rec); rerr != nil {
		s.logger.WarnContext(ctx, "fax webhooks: record delivery attempt", "err", rerr)
	}
}

// attemptError is what the console shows of a failed attempt: the transport
// error (its URL already redacted by post) or the receiver's status.
func attemptError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func (s *store) insertAttempt(ctx context.Context, r *attemptRecord) error {
	headers, err := json.Marshal(r.Headers)
	if err != nil {
		return fmt.Errorf("record attempt: %w", err)
	}
	var status any
	if r.StatusCode != 0 {
		status = r.StatusCode
	}
	// An attempt is recorded only while its fax exists: an account deleted
	// (a sandbox's) while a delivery was on the wire leaves nothing behind.
	// On PostgreSQL the fax row is share-locked until the insert commits, and
	// deleteAccount locks the account's faxes before it deletes the
	// attempts, so either the insert sees no fax or the delete sees the
	// attempt; SQLite's transactions are serial.
	if s.db.Dialect() == sqldb.Postgres {
		if err := s.attemptBatches.Do(ctx, &attemptRow{rec: r, headers: string(headers)}); err != nil {
			return fmt.Errorf("record attempt of event %d: %w", r.EventSeq, err)
		}
		return nil
	}
	// Quiet: no cache reads the attempts (the webhook log is read by its
	// readers after attemptLog fires).
	inserted := false
	err = s.db.QuietInTx(ctx, func(tx *sqldb.Tx) error {
		inserted = false
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM faxes WHERE id = ?`, r.FaxID).Scan(&n); err != nil || n == 0 {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO delivery_attempts (`+insertedAttemptColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.EventSeq, r.FaxID, r.Attempt, r.Target, sqldb.Micros(r.At), status, r.Error, r.Latency.Microseconds(),
			sqldb.NullMicros(r.NextRetry), string(headers), r.Succeeded, r.Body)
		inserted = err == nil
		return err
	})
	if err != nil {
		return fmt.Errorf("record attempt of event %d: %w", r.EventSeq, err)
	}
	if inserted {
		s.attemptLog.fire()
	}
	return nil
}

// insertedAttemptColumns are the delivery_attempts columns an insert gives.
const insertedAttemptColumns = `event_seq, fax_id, attempt, target, attempted_at, status_code, error,
	latency_micros, next_retry_at, headers, succeeded, body`

// attemptRow is an attempt waiting to be recorded on PostgreSQL.
type attemptRow struct {
	rec     *attemptRecord
	headers string
}

// newAttemptBatches returns the group commit of s's attempts (PostgreSQL).
func newAttemptBatches(s *store) *sqldb.GroupCommit[*attemptRow] {
	return &sqldb.GroupCommit[*attemptRow]{Commit: func(ctx context.Context, batch []*attemptRow) []error {
		errs := make([]error, len(batch))
		err := s.commitAttempts(ctx, batch)
		if err == nil || len(batch) == 1 {
			for i := range errs {
				errs[i] = err
			}
			return errs
		}
		for i, r := range batch {
			errs[i] = s.commitAttempts(ctx, []*attemptRow{r})
		}
		return errs
	}}
}

// commitAttempts records the attempts of batch on PostgreSQL, in one
// transaction sent in one round trip (sqldb.DB.Pipeline; the concurrent
// deliveries' attempts are committed together: sqldb.GroupCommit): the
// faxes' rows are share-locked, then the webhook log's lock of each of
// their accounts is taken, in one order, then the attempts are inserted,
// in batch order, those of faxes the first statement found. The webhook log
// (WebhookAttempts) is read by attempt id after a cursor: an account's
// attempts are recorded one transaction at a time, so their ids commit in
// order and a reader never passes an id that commits later. The locks are
// held while the transaction runs in PostgreSQL, with no round trip to the
// replica inside it.
func (s *store) commitAttempts(ctx context.Context, batch []*attemptRow) error {
	n := len(batch)
	var (
		seqs, at, latency  = make([]int64, n), make([]int64, n), make([]int64, n)
		faxIDs, targets    = make([]string, n), make([]string, n)
		errs, headers      = make([]string, n), make([]string, n)
		attempts, statuses = make([]int32, n), make([]*int32, n)
		next               = make([]*int64, n)
		succeeded          = make([]bool, n)
		bodies             = make([][]byte, n)
	)
	for i, row := range batch {
		r := row.rec
		seqs[i], faxIDs[i], attempts[i], targets[i], at[i] = r.EventSeq, r.FaxID, int32(r.Attempt), r.Target, sqldb.Micros(r.At)
		if r.StatusCode != 0 {
			code := int32(r.StatusCode)
			statuses[i] = &code
		}
		if r.NextRetry != nil {
			us := sqldb.Micros(*r.NextRetry)
			next[i] = &us
		}
		errs[i], latency[i], headers[i], succeeded[i], bodies[i] = r.Error, r.Latency.Microseconds(), row.headers, r.Succeeded, r.Body
	}
	var found, accounts, inserted int
	err := s.db.QuietPipeline(ctx,
		sqldb.Statement{SQL: `SELECT COUNT(*) FROM (SELECT id FROM faxes WHERE id = ANY(CAST(? AS TEXT[])) ORDER BY id FOR KEY SHARE) AS f`,
			Args: []any{faxIDs}, Scan: []any{&found}},
		sqldb.Statement{SQL: `SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock(` + attemptLogLock + `, h)
			FROM (SELECT DISTINCT hashtext(account_id) AS h FROM faxes WHERE id = ANY(CAST(? AS TEXT[])) ORDER BY h) AS a) AS l`,
			Args: []any{faxIDs}, Scan: []any{&accounts}},
		sqldb.Statement{SQL: `WITH ins AS (INSERT INTO delivery_attempts (` + insertedAttemptColumns + `)
			SELECT r.event_seq, r.fax_id, r.attempt, r.target, r.attempted_at, r.status_code, r.error, r.latency_micros,
				r.next_retry_at, r.headers, r.succeeded, r.body
			FROM unnest(CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS INTEGER[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]),
				CAST(? AS INTEGER[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]),
				CAST(? AS BOOLEAN[]), CAST(? AS BYTEA[])) WITH ORDINALITY
				AS r(event_seq, fax_id, attempt, target, attempted_at, status_code, error, latency_micros,
					next_retry_at, headers, succeeded, body, ord)
			WHERE EXISTS (SELECT 1 FROM faxes f WHERE f.id = r.fax_id)
			ORDER BY r.ord
			RETURNING 1) SELECT COUNT(*) FROM ins`,
			Args: []any{seqs, faxIDs, attempts, targets, at, statuses, errs, latency, next, headers, succeeded, bodies},
			Scan: []any{&inserted}})
	if err != nil {
		return err
	}
	if inserted > 0 {
		s.attemptLog.fire()
	}
	return nil
}

// lockClause is clause on PostgreSQL and nothing on SQLite, whose
// transactions are serial.
func (s *store) lockClause(clause string) string {
	if s.db.Dialect() == sqldb.Postgres {
		return clause
	}
	return ""
}
