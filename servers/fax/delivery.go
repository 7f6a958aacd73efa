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
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/apistack/apistack/gen/faxwebhooks"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/redact"
)

// The webhook signature headers (webhooks.yaml).
const (
	HeaderSignature = "Webhook-Signature-Ed25519"
	HeaderTimestamp = "Webhook-Timestamp"
)

// SignatureMessage is what a webhook signature covers: the timestamp, a "|"
// and the raw body.
func SignatureMessage(timestamp string, body []byte) []byte {
	msg := make([]byte, 0, len(timestamp)+1+len(body))
	msg = append(msg, timestamp...)
	msg = append(msg, '|')
	return append(msg, body...)
}

// sign is the Webhook-Signature-Ed25519 of body sent at timestamp.
func (s *Server) sign(timestamp string, body []byte) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(s.signingKey, SignatureMessage(timestamp, body)))
}

// deliveryBatch bounds how many outcomes are recorded in one transaction,
// and how many pending events are claimed at once.
const deliveryBatch = 512

// errLostClaim stops the delivery of a fax's events by a replica whose claim
// on them ended (its lease ran out and another replica took them over).
var errLostClaim = errors.New("the claim on the fax's events was lost")

// delivery is the state of the webhook sender: the events this replica
// claimed and has not finished, queued per fax so each fax's events go out
// in order, while different faxes' events go out concurrently.
type delivery struct {
	s        *Server
	client   *faxwebhooks.Client
	sem      chan struct{}
	outcomes chan deliveryOutcome

	mu     sync.Mutex
	queues map[string]*faxQueue
	// unrecorded are the events finished and not yet recorded: a claim
	// made again after a jump of the clock past the lease may return them.
	unrecorded map[int64]bool
	// recordedSinceClaim are the events recorded since the current claim
	// began: a claim that read them before their record committed returns
	// them though they are delivered, and they are no longer unrecorded
	// when the claim's events are queued.
	recordedSinceClaim map[int64]bool
}

// faxQueue is the claimed events of one fax that this replica sends.
type faxQueue struct {
	events []outboxEvent
	// lastSeq is the last event queued: a claim made again after the lease
	// ended may return events already queued.
	lastSeq int64
	// leaseUntil is when the claim ends unless it is extended.
	leaseUntil time.Time
}

// runDelivery claims and sends the outbox's events until ctx ends. A
// replica claims all the pending events of a fax at once, and only of the
// faxes no replica holds, so each fax's events go out in order whichever
// replicas share the database; a claim whose replica died is taken over when
// its lease ends. Finished events are recorded in batches by one writer; an
// event whose outcome was not recorded when the process stops is sent again
// after the restart or the takeover (at least once).
func (s *Server) runDelivery(ctx context.Context) {
	// Only a 2xx answer of the webhook URL itself acknowledges: a redirect is
	// an answer like any other non-2xx (retried, then the failover URL), never
	// followed, as following it would count an answer to a request that did
	// not carry the event (a 302 turns the POST into a GET).
	hc := *s.webhookClient
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	client, err := faxwebhooks.NewClient("http://webhook.invalid/", faxwebhooks.WithHTTPClient(&hc))
	if err != nil {
		s.logger.ErrorContext(ctx, "fax webhooks: client", "err", err)
		return
	}
	d := &delivery{
		s: s, client: client,
		sem:      make(chan struct{}, s.cfg.WebhookConcurrency),
		outcomes: make(chan deliveryOutcome, deliveryBatch),
		queues:   map[string]*faxQueue{},

		unrecorded: map[int64]bool{}, recordedSinceClaim: map[int64]bool{},
	}
	var senders sync.WaitGroup
	recorded := make(chan struct{})
	go func() { defer close(recorded); d.record(ctx) }()
	defer func() {
		senders.Wait()
		close(d.outcomes)
		<-recorded
	}()
	for {
		// Claim more only while fewer faxes are in flight than may be sent
		// to at once: a finished fax wakes the loop.
		d.mu.Lock()
		busy := len(d.queues) >= s.cfg.WebhookConcurrency
		d.mu.Unlock()
		var events []outboxEvent
		now := s.clock.Now()
		leaseUntil := now.Add(s.cfg.Lease)
		if !busy {
			d.mu.Lock()
			clear(d.recordedSinceClaim)
			d.mu.Unlock()
			var err error
			events, err = s.store.claimEvents(ctx, s.cfg.ReplicaID, now, leaseUntil, deliveryBatch)
			if err != nil && ctx.Err() == nil {
				s.logger.ErrorContext(ctx, "fax webhooks: claim events", "err", err)
			}
		}
		d.mu.Lock()
		for _, e := range events {
			if d.unrecorded[e.Seq] || d.recordedSinceClaim[e.Seq] {
				continue
			}
			q := d.queues[e.FaxID]
			if q == nil {
				q = &faxQueue{}
				d.queues[e.FaxID] = q
				senders.Add(1)
				go func(faxID string) { defer senders.Done(); d.sendAll(ctx, faxID) }(e.FaxID)
			}
			q.leaseUntil = leaseUntil
			if e.Seq > q.lastSeq {
				q.events, q.lastSeq = append(q.events, e), e.Seq
			}
		}
		d.mu.Unlock()
		wait := time.Second
		if len(events) == deliveryBatch {
			wait = 0
		}
		if !s.sleep(ctx, s.wakeOutbox, wait) {
			return
		}
	}
}

// sendAll sends the queued events of one fax, one after another.
func (d *delivery) sendAll(ctx context.Context, faxID string) {
	defer d.s.wakeDelivery() // the fax's later events, if any, can be claimed
	clk := d.s.faxClock(ctx, faxID)
	for {
		d.mu.Lock()
		q := d.queues[faxID]
		if len(q.events) == 0 || ctx.Err() != nil {
			delete(d.queues, faxID)
			d.mu.Unlock()
			return
		}
		e := q.events[0]
		q.events = q.events[1:]
		d.mu.Unlock()

		o, ok := d.send(ctx, e, clk)
		if ok {
			d.mu.Lock()
			d.unrecorded[e.Seq] = true
			d.mu.Unlock()
		}
		if !ok {
			// Stopping, or the claim was lost: the event stays pending for
			// the next start or the replica that holds it now.
			d.mu.Lock()
			delete(d.queues, faxID)
			d.mu.Unlock()
			return
		}
		select {
		case d.outcomes <- o:
		case <-ctx.Done():
			return
		}
	}
}

// holdClaim makes sure this replica's claim on the events of fax faxID
// outlasts an attempt starting now, extending it when it would not.
func (d *delivery) holdClaim(ctx context.Context, faxID string) error {
	s := d.s
	now := s.clock.Now()
	d.mu.Lock()
	q := d.queues[faxID]
	ends := q.leaseUntil
	d.mu.Unlock()
	if now.Add(s.cfg.WebhookTimeout).Before(ends) {
		return nil
	}
	leaseUntil := now.Add(s.cfg.Lease)
	held, err := s.store.renewEvents(ctx, faxID, s.cfg.ReplicaID, leaseUntil)
	if err != nil {
		return err
	}
	if !held {
		return errLostClaim
	}
	d.mu.Lock()
	q.leaseUntil = leaseUntil
	d.mu.Unlock()
	return nil
}

// send delivers one event: up to WebhookAttempts tries on the webhook URL,
// then as many on the failover URL, while this replica's claim on the
// event holds. ok is false when ctx ended first or the claim was lost.
//
// The waits between tries are in clk, the clock of the fax's tenant.
func (d *delivery) send(ctx context.Context, e outboxEvent, clk clock.Clock) (deliveryOutcome, bool) {
	s := d.s
	attempts := e.Attempts
	for _, target := range []string{e.WebhookURL, e.FailoverURL} {
		if target == "" {
			continue
		}
		// The claim outlasts the longest wait before the next attempt.
		maxWait := time.Duration(float64(s.cfg.WebhookMaxBackoff) * 1.5)
		pb, tries := &peekBackOff{BackOff: d.backOff()}, 0
		err := d.retry(ctx, clk, pb, func() error {
			if err := d.holdClaim(ctx, e.FaxID); err != nil {
				return backoff.Permanent(err)
			}
			attempts++
			tries++
			rec := &attemptRecord{EventSeq: e.Seq, FaxID: e.FaxID, Attempt: attempts, Target: redactURL(target)}
			err := d.post(ctx, clk, target, e, attempts, rec)
			d.recordAttempt(ctx, clk, rec, err, pb, tries)
			s.countAttempt(ctx, err)
			if err != nil && ctx.Err() == nil {
				leaseUntil := s.clock.Now().Add(s.cfg.Lease + maxWait)
				held, rerr := s.store.recordAttempts(ctx, e, attempts, s.cfg.ReplicaID, leaseUntil)
				switch {
				case rerr != nil:
					s.logger.WarnContext(ctx, "fax webhooks: record attempt", "err", rerr)
				case !held:
					return backoff.Permanent(errLostClaim)
				default:
					d.mu.Lock()
					d.queues[e.FaxID].leaseUntil = leaseUntil
					d.mu.Unlock()
					s.recorded.fire() // a retry is scheduled
				}
			}
			return err
		})
		if ctx.Err() != nil {
			return deliveryOutcome{}, false
		}
		if errors.Is(err, errLostClaim) {
			s.logger.WarnContext(ctx, "fax webhooks: claim lost, another replica sends the fax's events", "fax_id", e.FaxID, "event_id", e.EventID)
			return deliveryOutcome{}, false
		}
		if err == nil {
			return deliveryOutcome{Seq: e.Seq, Attempts: attempts, DeliveredTo: target, At: clk.Now()}, true
		}
		s.logger.WarnContext(ctx, "fax webhooks: giving up on a URL", "event_id", e.EventID, "event_type", e.Type,
			"url", redactURL(target), "attempts", attempts, "err", err)
	}
	s.logger.ErrorContext(ctx, "fax webhooks: event abandoned", "event_id", e.EventID, "event_type", e.Type, "fax_id", e.FaxID, "attempts", attempts)
	return deliveryOutcome{Seq: e.Seq, Attempts: attempts, At: clk.Now()}, true
}

// backOff is the schedule of a URL's retries: exponential, with jitter.
func (d *delivery) backOff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = d.s.cfg.WebhookBackoff
	b.MaxInterval = d.s.cfg.WebhookMaxBackoff
	b.RandomizationFactor = 0.5
	return b
}

// retry calls attempt up to WebhookAttempts times until it succeeds, waiting
// between tries as b says. The waits are in the server's clock, each counted
// from the start of the failed try: a test's fake clock moved on by the
// wait, once it saw the try fail, lets the next one go. A backoff.Permanent
// error is not retried.
func (d *delivery) retry(ctx context.Context, clk clock.Clock, b backoff.BackOff, attempt func() error) error {
	for try := 1; ; try++ {
		started := clk.Now()
		err := attempt()
		if err == nil {
			return nil
		}
		var permanent *backoff.PermanentError
		if errors.As(err, &permanent) {
			return permanent.Err
		}
		if try >= d.s.cfg.WebhookAttempts || ctx.Err() != nil {
			return err
		}
		timer := clock.NewTimerAt(clk, started.Add(b.NextBackOff()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return errors.Join(err, ctx.Err())
		case <-timer.C():
		}
	}
}

// post makes one signed attempt of e to target, noting in rec what it sent
// and what came back.
func (d *delivery) post(ctx context.Context, clk clock.Clock, target string, e outboxEvent, attempt int, rec *attemptRecord) error {
	s := d.s
	d.sem <- struct{}{}
	defer func() { <-d.sem }()
	body, err := envelope(e.Data, attempt, target)
	if err != nil {
		return backoff.Permanent(err)
	}
	// One instant for the signed timestamp (the stack's time) and the
	// attempt's time in its tenant's clock.
	stackNow := s.clock.Now()
	at := tenantAt(clk, stackNow)
	ts := strconv.FormatInt(stackNow.Unix(), 10)
	sig := s.sign(ts, body)
	tsInt, _ := strconv.ParseInt(ts, 10, 64)
	u, err := url.Parse(target)
	if err != nil {
		return backoff.Permanent(fmt.Errorf("webhook URL: %w", err))
	}
	actx, cancel := context.WithTimeout(s.withDelivery(ctx, e.FaxID, attempt), s.cfg.WebhookTimeout)
	defer cancel()
	rec.sent(at, stackNow, sig, ts, body)
	resp, err := d.client.ReceiveFaxEventWithBody(actx,
		&faxwebhooks.ReceiveFaxEventParams{WebhookSignatureEd25519: sig, WebhookTimestamp: tsInt},
		"application/json", bytes.NewReader(body),
		func(_ context.Context, req *http.Request) error {
			// The event goes to the configured URL exactly, not to a path
			// below it.
			req.URL = u
			req.Host = u.Host
			req.Header.Set("User-Agent", "apistack-fax-webhooks/2")
			return nil
		})
	if err != nil {
		// The transport's error quotes the URL, query included: keep the
		// receiver's secrets out of the logs it ends up in.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = &url.Error{Op: ue.Op, URL: redactURL(target), Err: ue.Err}
		}
		return fmt.Errorf("post: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	rec.StatusCode = resp.StatusCode
	if resp.StatusCode/100 != 2 {
		return receiverStatus(resp.StatusCode)
	}
	return nil
}

// envelope is the body of one attempt: the event's data and this attempt's
// meta.
func envelope(data []byte, attempt int, target string) ([]byte, error) {
	var ev faxwebhooks.FaxEvent
	if err := ev.Data.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("stored event: %w", err)
	}
	// The body is kept in the webhook log and shown to whoever reads it:
	// the URL's password and tokens are not repeated there.
	ev.Meta = faxwebhooks.FaxEventMeta{Attempt: attempt, DeliveredTo: redact.URL(target)}
	return json.Marshal(ev)
}

// record writes finished deliveries to the outbox in batches (one
// transaction each), until outcomes is closed.
func (d *delivery) record(ctx context.Context) {
	batch := make([]deliveryOutcome, 0, deliveryBatch)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		// Record even while stopping: these events were delivered.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err := d.s.store.recordOutcomes(wctx, batch)
		if err != nil {
			d.s.logger.ErrorContext(ctx, "fax webhooks: record deliveries", "err", err)
		}
		d.mu.Lock()
		for _, o := range batch {
			delete(d.unrecorded, o.Seq)
			if err == nil {
				d.recordedSinceClaim[o.Seq] = true
			}
		}
		d.mu.Unlock()
		batch = batch[:0]
		d.s.wakeDelivery() // the faxes of these events may be claimed again
		d.s.recorded.fire()
	}
	for o := range d.outcomes {
		batch = append(batch, o)
	drain:
		for len(batch) < deliveryBatch {
			select {
			case more, ok := <-d.outcomes:
				if !ok {
					break drain
				}
				batch = append(batch, more)
			default:
				break drain
			}
		}
		flush()
	}
	flush()
}

// redactURL drops the query and user info of a URL before it is logged:
// receivers put secrets there.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
