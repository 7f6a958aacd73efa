package sqldb

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Concurrent writes are committed in batches of at most Max, each caller
// getting its own outcome; a caller whose context ended before its batch
// started is not committed.
func TestGroupCommit_BatchesConcurrentWritesAndGivesEachItsOutcome(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var batches [][]int
	g := &GroupCommit[int]{Max: 4, Commit: func(_ context.Context, batch []int) []error {
		once.Do(func() {
			close(started)
			<-release // the first batch waits while the others queue
		})
		mu.Lock()
		batches = append(batches, append([]int(nil), batch...))
		mu.Unlock()
		errs := make([]error, len(batch))
		for i, v := range batch {
			if v%2 == 1 {
				errs[i] = errors.New("odd")
			}
		}
		return errs
	}}
	first := make(chan error)
	go func() { first <- g.Do(context.Background(), 0) }()
	// The first write's batch is on its way (Commit waits on release);
	// these queue behind it.
	<-started
	var wg sync.WaitGroup
	results := make([]error, 10)
	for i := 1; i <= 9; i++ {
		wg.Go(func() { results[i] = g.Do(context.Background(), i) })
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	gone := make(chan error)
	go func() { gone <- g.Do(cancelled, 100) }()
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.waiting) == 10
	}, 10*time.Second, time.Millisecond, "the writes queue behind the first batch")
	close(release)
	require.NoError(t, <-first)
	wg.Wait()
	assert.ErrorIs(t, <-gone, context.Canceled)
	for i := 1; i <= 9; i++ {
		if i%2 == 1 {
			assert.Error(t, results[i], "%d", i)
		} else {
			assert.NoError(t, results[i], "%d", i)
		}
	}
	committed := map[int]bool{}
	for _, b := range batches {
		assert.LessOrEqual(t, len(b), 4)
		for _, v := range b {
			assert.False(t, committed[v], "%d committed once", v)
			committed[v] = true
		}
	}
	assert.Len(t, committed, 10, "every live write, not the cancelled one")
	assert.Less(t, len(batches), 10, "writes that queued were committed together")
}
