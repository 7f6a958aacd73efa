package apistacktest

import (
	"context"
	"fmt"
	"sync"

	faxclient "github.com/apistack/apistack/clients/fax"
)

// Inbox collects the fax webhooks delivered to the stack's receiver, each
// verified with the stack's public key. It is safe for concurrent use.
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
