package storage

import (
	"context"
	"fmt"
	"net/http"

	"golang.org/x/sync/semaphore"

	"github.com/apistack/apistack/internal/lifecycledoc"
)

// DefaultDocumentBudget is how many bytes of signed request bodies a server
// holds at once unless told otherwise: 8 MiB, eight of the largest
// lifecycle configurations.
const DefaultDocumentBudget = 8 << 20

// documentBudget bounds the memory of the requests that passed their
// signature check: each takes its body's declared size (the largest body
// when undeclared) from the budget before a byte of it is read, and gives
// it back when its answer is written. A request's cost in memory is a small
// multiple of its body (the body, the spec validation's copy and tree, the
// handler's), so the budget bounds the process's memory whatever the
// number of connections: the 81st concurrent 1 MiB PUT waits, its body
// unread in the kernel's buffers, rather than adding to the heap.
type documentBudget struct {
	sem  *semaphore.Weighted
	size int64
}

// newDocumentBudget returns a budget of size bytes (0 means DefaultDocumentBudget).
func newDocumentBudget(size int64) *documentBudget {
	if size <= 0 {
		size = DefaultDocumentBudget
	}
	return &documentBudget{sem: semaphore.NewWeighted(size), size: size}
}

// acquire waits until req's body fits in the budget and returns the
// function that gives it back; it fails when req's context ends first (the
// caller went away).
func (b *documentBudget) acquire(req *http.Request) (release func(), err error) {
	n := req.ContentLength
	if n < 0 || n > lifecycledoc.MaxBodySize {
		n = lifecycledoc.MaxBodySize
	}
	n = min(max(n, 1), b.size)
	if err := b.sem.Acquire(req.Context(), n); err != nil {
		return nil, fmt.Errorf("storage: waiting to read the body: %w", context.Cause(req.Context()))
	}
	return func() { b.sem.Release(n) }, nil
}
