package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
)

// TakeAll spends a request's limits in order and stops at the first refusal,
// leaving the later buckets untouched, with the same decisions on every
// store as one Take after the other on a store of its own.
func TestTakeAll_SpendsInOrderUntilTheFirstRefusal(t *testing.T) {
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clk, refClk := clock.NewFake(start), clock.NewFake(start)
			store := newStore(t)
			ls := []*Limiter{New("second", 3, time.Second, clk, store), New("window", 5, time.Minute, clk, store)}
			ref := NewMemoryStore()
			refs := []*Limiter{New("second", 3, time.Second, refClk, ref), New("window", 5, time.Minute, refClk, ref)}
			for step := range 12 {
				got, err := TakeAll(ctx, "r", ls...)
				require.NoError(t, err)
				var want []Decision
				for _, l := range refs {
					d, err := l.Take(ctx, "r")
					require.NoError(t, err)
					want = append(want, d)
					if !d.Allowed {
						break
					}
				}
				require.Equal(t, len(want), len(got), "step %d", step)
				for i := range want {
					assert.Equal(t, want[i].Allowed, got[i].Allowed, "step %d limit %d", step, i)
					assert.Equal(t, want[i].Remaining, got[i].Remaining, "step %d limit %d", step, i)
					// The SQL store keeps microseconds.
					assert.WithinDuration(t, want[i].RetryAt, got[i].RetryAt, 10*time.Microsecond, "step %d limit %d", step, i)
					assert.WithinDuration(t, want[i].Reset, got[i].Reset, 10*time.Microsecond, "step %d limit %d", step, i)
				}
				if step%3 == 2 {
					clk.Advance(400 * time.Millisecond)
					refClk.Advance(400 * time.Millisecond)
				}
			}
		})
	}
}
