package faults

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInjector_AddRefusesWhatCannotApply(t *testing.T) {
	in, err := New("pam", nil, nil)
	require.NoError(t, err)
	tests := []struct {
		name string
		f    Fault
		ok   bool
	}{
		{"a known operation", Fault{Kind: RateLimited, Operation: "ListGroups"}, true},
		{"every operation", Fault{Kind: Drop}, true},
		{"an unknown operation", Fault{Kind: Drop, Operation: "ListFaxes"}, false},
		{"an unknown kind", Fault{Kind: Kind(99)}, false},
		{"a share over 1", Fault{Kind: Slow, Share: 1.5}, false},
		{"a negative count", Fault{Kind: Slow, Count: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := in.Add(tt.f)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
	_, err = New("nope", nil, nil)
	assert.Error(t, err)
}

func TestInjector_TakesTheNextCountRequestsOfItsOperation(t *testing.T) {
	in, err := New("pam", nil, nil)
	require.NoError(t, err)
	require.NoError(t, in.Add(Fault{Kind: InternalError, Operation: "ListGroups", Count: 2}))
	_, ok := in.take("GetGroup")
	assert.False(t, ok, "another operation")
	for range 2 {
		f, ok := in.take("ListGroups")
		require.True(t, ok)
		assert.Equal(t, InternalError, f.Kind)
	}
	_, ok = in.take("ListGroups")
	assert.False(t, ok, "the count is spent")
	assert.Equal(t, 2, in.Injected(InternalError))
	assert.Equal(t, "internal-error", InternalError.String())
}

// recordingTransport answers 204 and records the bodies it was sent.
type recordingTransport struct {
	mu     sync.Mutex
	bodies []string
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies = append(r.bodies, string(b))
	r.mu.Unlock()
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

func deliver(t *testing.T, rt http.RoundTripper, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://receiver.test/hooks", bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
}

func TestWebhooks_DuplicateAndReorder(t *testing.T) {
	tests := []struct {
		name  string
		setup func(w *Webhooks)
		want  []string
	}{
		{"untouched", func(*Webhooks) {}, []string{"a", "b", "c"}},
		{"the first twice", func(w *Webhooks) { w.Duplicate(1) }, []string{"a", "a", "b", "c"}},
		{"the first after the second", func(w *Webhooks) { w.Reorder(1) }, []string{"b", "a", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &recordingTransport{}
			w := &Webhooks{}
			tt.setup(w)
			rt := w.Transport(next)
			for _, b := range []string{"a", "b", "c"} {
				deliver(t, rt, b)
			}
			assert.Equal(t, tt.want, next.bodies)
		})
	}
}

func TestWebhooks_ReleaseSendsTheLastHeldDelivery(t *testing.T) {
	next := &recordingTransport{}
	w := &Webhooks{}
	w.Reorder(1)
	deliver(t, w.Transport(next), "only")
	assert.Empty(t, next.bodies, "held back")
	require.NoError(t, w.Release(next))
	assert.Equal(t, []string{"only"}, next.bodies)
}
