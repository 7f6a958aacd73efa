package faults

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Webhooks makes the fax server's webhook deliveries come twice or out of
// order, as at-least-once delivery allows. Its Transport goes under the fax
// server's webhook sender (fax.Config.WebhookTransport). It is safe for
// concurrent use.
type Webhooks struct {
	mu        sync.Mutex
	duplicate int
	reorder   int
	held      *heldDelivery
}

type heldDelivery struct {
	req  *http.Request
	body []byte
}

// Duplicate sends each of the next n deliveries twice, the second right
// after the first was answered.
func (w *Webhooks) Duplicate(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.duplicate += n
}

// Reorder holds back each of the next n deliveries, acknowledging it to the
// sender at once, and sends it right after the delivery that follows it (of
// any fax): the receiver sees the two swapped. A delivery still held when
// no other follows is sent by Release. A held delivery keeps its signature's
// timestamp: a receiver judging it by a clock moved on by more than its
// tolerance meanwhile refuses it.
func (w *Webhooks) Reorder(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reorder += n
}

// Release sends the delivery held back by Reorder, if any, now.
func (w *Webhooks) Release(next http.RoundTripper) error {
	w.mu.Lock()
	held := w.held
	w.held = nil
	w.mu.Unlock()
	if held == nil {
		return nil
	}
	return send(next, held)
}

// Transport wraps next, the sender's transport, with the faults asked for.
func (w *Webhooks) Transport(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		w.mu.Lock()
		dup := w.duplicate > 0
		if dup {
			w.duplicate--
		}
		hold := w.reorder > 0 && w.held == nil
		if hold {
			w.reorder--
		}
		w.mu.Unlock()
		if !dup && !hold {
			resp, err := next.RoundTrip(req)
			w.releaseAfter(next)
			return resp, err
		}
		body, err := readBody(req)
		if err != nil {
			return nil, err
		}
		h := &heldDelivery{req: req.WithContext(context.WithoutCancel(req.Context())), body: body}
		if hold {
			w.mu.Lock()
			w.held = h
			w.mu.Unlock()
			return &http.Response{StatusCode: http.StatusNoContent, Status: "204 No Content", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		}
		resp, err := next.RoundTrip(cloneWithBody(req, body))
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return next.RoundTrip(cloneWithBody(req, body))
	})
}

// releaseAfter sends the held delivery once the one after it was sent.
func (w *Webhooks) releaseAfter(next http.RoundTripper) {
	w.mu.Lock()
	held := w.held
	w.held = nil
	w.mu.Unlock()
	if held != nil {
		_ = send(next, held)
	}
}

func send(next http.RoundTripper, h *heldDelivery) error {
	resp, err := next.RoundTrip(cloneWithBody(h.req, h.body))
	if err != nil {
		return fmt.Errorf("faults: send a held delivery: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("faults: read a delivery: %w", err)
	}
	return b, nil
}

func cloneWithBody(req *http.Request, body []byte) *http.Request {
	c := req.Clone(req.Context())
	if strings.EqualFold(req.Method, http.MethodGet) && len(body) == 0 {
		return c
	}
	c.Body = io.NopCloser(bytes.NewReader(body))
	c.ContentLength = int64(len(body))
	c.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return c
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
