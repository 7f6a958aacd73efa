package sandbox

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/apistack/apistack/servers/faults"
	"github.com/apistack/apistack/servers/internal/apiserver"
)

// webhookFaults are the duplicate and reorder faults of one sandbox's
// deliveries on this replica: the in-process kit's (faults.Webhooks), fed
// one delivery at a time by the faults the database says took it. A
// reordered delivery is held by the replica that sends it, until that
// replica sends the sandbox's next delivery (or the faults are cleared).
type webhookFaults struct {
	w    *faults.Webhooks
	next http.RoundTripper
}

// hookState is the per-replica state of the sandboxes' webhook faults.
type hookState struct {
	mu   sync.Mutex
	sets map[string]*webhookFaults
}

func (h *hookState) of(set string, next http.RoundTripper, create bool) *webhookFaults {
	h.mu.Lock()
	defer h.mu.Unlock()
	wf := h.sets[set]
	if wf == nil && create {
		if h.sets == nil {
			h.sets = map[string]*webhookFaults{}
		}
		wf = &webhookFaults{w: &faults.Webhooks{}, next: next}
		h.sets[set] = wf
	}
	return wf
}

// forget drops the sandbox's state, sending a held delivery first when
// release is set (its faults were cleared: the sandbox lives on).
func (h *hookState) forget(set string, release bool) {
	h.mu.Lock()
	wf := h.sets[set]
	delete(h.sets, set)
	h.mu.Unlock()
	if wf != nil && release {
		_ = wf.w.Release(wf.next)
	}
}

// WebhookTransport wraps next, the transport of the fax server's webhook
// deliveries, with the sandboxes' webhook faults: a delivery of a
// sandbox's fax (apiserver.Delivery) is offered to that sandbox's
// webhook-fail, webhook-duplicate and webhook-reorder faults, in order, and
// the first that takes it (its count counted in the database, as for
// request faults) acts on it. Other deliveries pass untouched.
func (s *Server) WebhookTransport(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		ctx := req.Context()
		d, ok := apiserver.DeliveryOf(ctx)
		if !ok {
			return next.RoundTrip(req)
		}
		set, err := d.Set(ctx)
		if err != nil || !strings.HasPrefix(set, IDPrefix) {
			return next.RoundTrip(req)
		}
		switch kind := s.takeWebhookFault(ctx, set, d.Attempt); kind {
		case kindWebhookFail:
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1",
				ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		case kindWebhookDuplicate, kindWebhookReorder:
			wf := s.hooks.of(set, next, true)
			if kind == kindWebhookDuplicate {
				wf.w.Duplicate(1)
			} else {
				wf.w.Reorder(1)
			}
			return wf.w.Transport(next).RoundTrip(req)
		}
		// A delivery held back waits for this one.
		if wf := s.hooks.of(set, next, false); wf != nil {
			return wf.w.Transport(next).RoundTrip(req)
		}
		return next.RoundTrip(req)
	})
}

// takeWebhookFault returns the kind of the sandbox's webhook fault that
// takes a delivery attempt, "" for none.
func (s *Server) takeWebhookFault(ctx context.Context, set string, attempt int) string {
	defs, err := s.faults.active(ctx, set)
	if err != nil {
		s.logger.WarnContext(ctx, "sandbox faults: read", "sandbox", set, "err", err)
		return ""
	}
	for _, d := range defs {
		if d.API != "" || d.spent.Load() || (d.Kind == kindWebhookFail && d.Attempt != attempt) {
			continue
		}
		took, err := s.store.takeFault(ctx, d.ID)
		if err != nil {
			s.logger.WarnContext(ctx, "sandbox faults: take", "sandbox", set, "fault", d.ID, "err", err)
			return ""
		}
		if !took {
			d.spent.Store(true)
			continue
		}
		return d.Kind
	}
	return ""
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
