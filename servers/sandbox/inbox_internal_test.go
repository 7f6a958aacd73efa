package sandbox

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sandbox's inbox takes deliveries while the sandbox is made (its
// fixture's events may be delivered before the create answers) and once it
// is ready, and none once it is being deleted, or for no sandbox.
func TestTakesDeliveries_WhileMadeAndReadyNotWhileDeleted(t *testing.T) {
	ctx := context.Background()
	s := &Server{store: &store{db: sandboxDB(t)}}
	now := time.Now()
	ids := map[string]string{}
	for _, state := range []string{stateCreating, stateReady, stateDeleting} {
		id, token := newID()
		hash := sha256.Sum256([]byte(token))
		require.NoError(t, s.store.insertCapped(ctx, record{ID: id, TokenHash: hash[:], Clock: ClockFrozen, TTL: time.Hour,
			State: state, CreatedAt: now, LastUsedAt: now, ClockBase: now}, 10))
		ids[state] = id
	}
	unknown, _ := newID()
	for _, c := range []struct {
		name, id string
		takes    bool
	}{
		{"being made", ids[stateCreating], true},
		{"ready", ids[stateReady], true},
		{"being deleted", ids[stateDeleting], false},
		{"no such sandbox", unknown, false},
		{"not an id", "sbx-\x00", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.TakesDeliveries(ctx, c.id)
			require.NoError(t, err)
			assert.Equal(t, c.takes, got)
		})
	}
}
