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

// deliveryBatch bounds how many outcomes are recorded in one transaction,
// and how many pending events are read at once.
const deliveryBatch = 512

// delivery is the state of the webhook sender: the events read from the
// outbox and not yet finished, queued per fax so each fax's events go out in
// order, while different faxes' events go out concurrently.
type delivery struct {
	s        *Server
	client   *faxwebhooks.Client
	sem      chan struct{}
	outcomes chan deliveryOutcome

	mu      sync.Mutex
	queues  map[string][]outboxEvent
	active  map[string]bool
	lastSeq int64
}

// runDelivery sends the outbox's events until ctx ends. Finished events are
// recorded in batches by one writer; an event whose outcome was not recorded
// when the process stops is sent again after the restart (at least once).
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
		queues:   map[string][]outboxEvent{},
		active:   map[string]bool{},
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
		events, err := s.store.pendingEvents(ctx, d.lastSeq, deliveryBatch)
		if err != nil && ctx.Err() == nil {
			s.logger.ErrorContext(ctx, "fax webhooks: read outbox", "err", err)
		}
		d.mu.Lock()
		for _, e := range events {
			d.lastSeq = e.Seq
			d.queues[e.FaxID] = append(d.queues[e.FaxID], e)
			if !d.active[e.FaxID] {
				d.active[e.FaxID] = true
				senders.Add(1)
				go func(faxID string) { defer senders.Done(); d.sendAll(ctx, faxID) }(e.FaxID)
			}
		}
		d.mu.Unlock()
		if len(events) == deliveryBatch {
			continue
		}
		timer := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-s.wakeOutbox:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// sendAll sends the queued events of one fax, one after another.
func (d *delivery) sendAll(ctx context.Context, faxID string) {
	for {
		d.mu.Lock()
		q := d.queues[faxID]
		if len(q) == 0 || ctx.Err() != nil {
			delete(d.queues, faxID)
			delete(d.active, faxID)
			d.mu.Unlock()
			return
		}
		e := q[0]
		d.queues[faxID] = q[1:]
		d.mu.Unlock()

		o, ok := d.send(ctx, e)
		if !ok {
			return // stopping: the event stays pending for the next start
		}
		select {
		case d.outcomes <- o:
		case <-ctx.Done():
			return
		}
	}
}

// send delivers one event: up to WebhookAttempts tries on the webhook URL,
// then as many on the failover URL. ok is false when ctx ended first.
func (d *delivery) send(ctx context.Context, e outboxEvent) (deliveryOutcome, bool) {
	s := d.s
	attempts := e.Attempts
	for _, target := range []string{e.WebhookURL, e.FailoverURL} {
		if target == "" {
			continue
		}
		b := backoff.NewExponentialBackOff()
		b.InitialInterval = s.cfg.WebhookBackoff
		b.MaxInterval = s.cfg.WebhookMaxBackoff
		b.RandomizationFactor = 0.5
		_, err := backoff.Retry(ctx, func() (struct{}, error) {
			attempts++
			err := d.post(ctx, target, e, attempts)
			s.countAttempt(ctx, err)
			if err != nil && ctx.Err() == nil {
				if rerr := s.store.recordAttempts(ctx, e.Seq, attempts); rerr != nil {
					s.logger.WarnContext(ctx, "fax webhooks: record attempt", "err", rerr)
				}
			}
			return struct{}{}, err
		}, backoff.WithBackOff(b), backoff.WithMaxTries(uint(s.cfg.WebhookAttempts)), backoff.WithMaxElapsedTime(0))
		if ctx.Err() != nil {
			return deliveryOutcome{}, false
		}
		if err == nil {
			return deliveryOutcome{Seq: e.Seq, Attempts: attempts, DeliveredTo: target, At: s.clock.Now()}, true
		}
		s.logger.WarnContext(ctx, "fax webhooks: giving up on a URL", "event_id", e.EventID, "event_type", e.Type,
			"url", redactURL(target), "attempts", attempts, "err", err)
	}
	s.logger.ErrorContext(ctx, "fax webhooks: event abandoned", "event_id", e.EventID, "event_type", e.Type, "fax_id", e.FaxID, "attempts", attempts)
	return deliveryOutcome{Seq: e.Seq, Attempts: attempts, At: s.clock.Now()}, true
}

// post makes one signed attempt of e to target.
func (d *delivery) post(ctx context.Context, target string, e outboxEvent, attempt int) error {
	s := d.s
	d.sem <- struct{}{}
	defer func() { <-d.sem }()
	body, err := envelope(e.Data, attempt, target)
	if err != nil {
		return backoff.Permanent(err)
	}
	ts := strconv.FormatInt(s.clock.Now().Unix(), 10)
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(s.signingKey, SignatureMessage(ts, body)))
	tsInt, _ := strconv.ParseInt(ts, 10, 64)
	u, err := url.Parse(target)
	if err != nil {
		return backoff.Permanent(fmt.Errorf("webhook URL: %w", err))
	}
	actx, cancel := context.WithTimeout(ctx, s.cfg.WebhookTimeout)
	defer cancel()
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
	ev.Meta = faxwebhooks.FaxEventMeta{Attempt: attempt, DeliveredTo: target}
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
		if err := d.s.store.recordOutcomes(wctx, batch); err != nil {
			d.s.logger.ErrorContext(ctx, "fax webhooks: record deliveries", "err", err)
		}
		batch = batch[:0]
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
