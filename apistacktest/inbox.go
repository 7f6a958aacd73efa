package apistacktest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/faults"
)

// Inbox collects the fax webhooks delivered to the stack's fax
// application, each verified with the stack's public key: in process those
// its receiver gets, connected those the sandbox's webhook log shows its
// own inbox accepted. It is safe for concurrent use.
type Inbox struct {
	mu      sync.Mutex
	events  []faxclient.Event
	arrived chan struct{} // closed and replaced on every arrival
}

func newInbox() *Inbox { return &Inbox{arrived: make(chan struct{})} }

func (in *Inbox) add(e faxclient.Event) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.events = append(in.events, e)
	close(in.arrived)
	in.arrived = make(chan struct{})
}

// Events returns every delivery received so far, in arrival order
// (redeliveries included: deduplicate on Event.ID).
func (in *Inbox) Events() []faxclient.Event {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]faxclient.Event(nil), in.events...)
}

// EventsOf returns the deliveries of one fax, in arrival order.
func (in *Inbox) EventsOf(faxID string) []faxclient.Event {
	var out []faxclient.Event
	for _, e := range in.Events() {
		if e.FaxID == faxID {
			out = append(out, e)
		}
	}
	return out
}

// Wait returns the first delivery of fax faxID whose type is eventType
// ("fax.delivered"), waiting for it until ctx ends. Time in the stack only
// moves with its Clock: advance it for the fax to take its steps.
func (in *Inbox) Wait(ctx context.Context, faxID, eventType string) (faxclient.Event, error) {
	events, err := in.WaitN(ctx, faxID, eventType, 1)
	if err != nil {
		return faxclient.Event{}, err
	}
	return events[0], nil
}

// WaitN returns the first n deliveries of fax faxID whose type is eventType,
// waiting for them until ctx ends: the copies of a delivery duplicated on
// purpose (Webhooks().Duplicate), or the retries of one the receiver failed.
func (in *Inbox) WaitN(ctx context.Context, faxID, eventType string, n int) ([]faxclient.Event, error) {
	for {
		in.mu.Lock()
		arrived := in.arrived
		var found []faxclient.Event
		for _, e := range in.events {
			if e.FaxID == faxID && e.Type == eventType {
				found = append(found, e)
			}
		}
		in.mu.Unlock()
		if len(found) >= n {
			return found[:n], nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil, fmt.Errorf("apistacktest: %d of %d %s webhooks of fax %s: %w", len(found), n, eventType, faxID, ctx.Err())
		}
	}
}

// followLog feeds the inbox of a connected stack from the sandbox's
// webhook log (GET /sandboxes/{id}/webhooks, long-polled), so the
// deployment never needs to reach the test: the sandbox's fax application
// delivers to the sandbox's own inbox, and each attempt that inbox
// accepted (2xx) is one delivery here, in the log's order, once its
// signature verifies with the stack's key (the sandbox's inbox judged its
// timestamp). The sandbox's webhook duplicate and reorder faults act on
// the transport, which the log does not show: the Inbox mirrors them
// (hooks). Deliveries to another URL (SetFaxWebhookURL) are not the
// inbox's, as in process. It runs until stop is called; an error it cannot
// ride out fails the test.
func (r *remoteSandbox) followLog(in *Inbox, key []byte) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	inbox := "/sandboxes/" + r.id + "/inbox"
	r.deliver = roundTripper(func(req *http.Request) (*http.Response, error) {
		e, err := verifiedEvent(key, req)
		if err != nil {
			r.t.Errorf("apistacktest: a delivery of sandbox %s: %v", r.id, err)
		} else {
			in.add(e)
		}
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	})
	go func() {
		defer close(done)
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			resp, err := r.webhookLog(ctx, r.read.Load(), "25s")
			switch {
			case ctx.Err() != nil:
				return
			case err != nil || resp.StatusCode() >= http.StatusInternalServerError:
				// The deployment is restarting or out of reach: ask again.
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			case resp.JSON200 == nil:
				r.t.Errorf("apistacktest: read the webhook log of sandbox %s: %d %s", r.id, resp.StatusCode(), resp.Body)
				return
			}
			backoff = 100 * time.Millisecond
			for _, a := range resp.JSON200.Data {
				hooks := r.hooksFor(a.Seq)
				if a.Succeeded && strings.HasSuffix(a.Target, inbox) {
					req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(a.Body))
					for name, value := range a.Headers {
						req.Header.Set(name, value)
					}
					if resp, err := hooks.Transport(r.deliver).RoundTrip(req); err == nil {
						_ = resp.Body.Close()
					}
				}
				r.read.Store(a.Seq)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// hooksFor is the mirror of the webhook faults for the attempt seq: those
// planned for attempts before it are applied first.
func (r *remoteSandbox) hooksFor(seq int64) *faults.Webhooks {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.planned) > 0 && r.planned[0].after < seq {
		r.planned[0].apply(r.hooks)
		r.planned = r.planned[1:]
	}
	return r.hooks
}

// webhookLog reads the attempts after seq from the sandbox's webhook log,
// waiting up to wait ("" for none) for one.
func (r *remoteSandbox) webhookLog(ctx context.Context, after int64, wait string) (*sandboxapi.ListSandboxWebhooksResponse, error) {
	p := &sandboxapi.ListSandboxWebhooksParams{After: &after, Limit: ptr(1000)}
	if wait != "" {
		p.Wait = &wait
	}
	return r.api.ListSandboxWebhooksWithResponse(ctx, r.id, p)
}

// logEnd is the seq of the last attempt the sandbox's webhook log lists
// now.
func (r *remoteSandbox) logEnd() (int64, error) {
	end := r.read.Load()
	for {
		resp, err := r.webhookLog(context.Background(), end, "")
		if err == nil && resp.JSON200 == nil {
			err = fmt.Errorf("%d %s", resp.StatusCode(), resp.Body)
		}
		if err != nil {
			return 0, fmt.Errorf("apistacktest: read the webhook log of sandbox %s: %w", r.id, err)
		}
		if len(resp.JSON200.Data) == 0 {
			return end, nil
		}
		end = resp.JSON200.Data[len(resp.JSON200.Data)-1].Seq
	}
}

// verifiedEvent is the event req (a logged attempt, re-posted) delivered,
// its signature verified with key (its timestamp is judged at the time it
// was signed: the sandbox's inbox judged it on arrival).
func verifiedEvent(key []byte, req *http.Request) (faxclient.Event, error) {
	var got faxclient.Event
	ts, err := strconv.ParseInt(req.Header.Get(faxclient.HeaderTimestamp), 10, 64)
	if err != nil {
		return got, fmt.Errorf("no timestamp: %w", err)
	}
	h, err := faxclient.NewWebhookHandler(key, func(_ context.Context, e faxclient.Event) error {
		got = e
		return nil
	}, faxclient.WithClock(func() time.Time { return time.Unix(ts, 0) }))
	if err != nil {
		return got, err
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code/100 != 2 {
		return got, fmt.Errorf("refused (%d): %s", rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	return got, nil
}

// roundTripper is a function as an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
