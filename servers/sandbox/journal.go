package sandbox

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/apiserver"
)

// Journal is the request journal every API writes into
// (apiserver.Journal): the requests of the sandboxes' credentials. Entries
// are written in batches by one writer (group commit): a request waits
// until the batch holding its entry is committed, so whoever read a
// response finds its entry on every replica, while concurrent requests
// share a commit.
type Journal struct {
	store   *store
	clock   clock.Clock
	logger  *slog.Logger
	enabled atomic.Bool

	mu      sync.Mutex
	pending []pendingEntry
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

var _ apiserver.Journal = (*Journal)(nil)

type pendingEntry struct {
	entry apiserver.JournalEntry
	done  chan struct{}
}

// maxBatch is the most entries committed together.
const maxBatch = 256

func newJournal(st *store, c clock.Clock, logger *slog.Logger) *Journal {
	j := &Journal{store: st, clock: c, logger: logger, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	j.enabled.Store(true)
	go j.run()
	return j
}

// SetEnabled turns journaling on or off (on by default): the benchmark of
// what the journal costs measures both in one run.
func (j *Journal) SetEnabled(on bool) { j.enabled.Store(on) }

// Journals reports whether set is a sandbox's, while journaling is on.
func (j *Journal) Journals(set string) bool {
	return j.enabled.Load() && strings.HasPrefix(set, IDPrefix)
}

// Now is the stack's clock.
func (j *Journal) Now() time.Time { return j.clock.Now() }

// Record queues e and waits until it is committed (or ctx ends, or the
// journal is closed).
func (j *Journal) Record(ctx context.Context, e apiserver.JournalEntry) {
	p := pendingEntry{entry: e, done: make(chan struct{})}
	j.mu.Lock()
	j.pending = append(j.pending, p)
	j.mu.Unlock()
	select {
	case j.kick <- struct{}{}:
	default:
	}
	select {
	case <-p.done:
	case <-ctx.Done():
	case <-j.done:
	}
}

// run is the writer: it commits whatever is pending, batch after batch.
func (j *Journal) run() {
	defer close(j.done)
	for {
		select {
		case <-j.stop:
			j.flush()
			return
		case <-j.kick:
			j.flush()
		}
	}
}

// flush commits every pending entry, in batches of at most maxBatch.
func (j *Journal) flush() {
	for {
		j.mu.Lock()
		n := min(len(j.pending), maxBatch)
		batch := j.pending[:n:n]
		j.pending = j.pending[n:]
		if len(j.pending) == 0 {
			j.pending = nil
		}
		j.mu.Unlock()
		if n == 0 {
			return
		}
		j.write(batch)
		for _, p := range batch {
			close(p.done)
		}
	}
}

// write commits batch; when that fails (an entry's sandbox was deleted
// meanwhile), each entry is tried alone, and those refused are dropped.
func (j *Journal) write(batch []pendingEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	entries := make([]apiserver.JournalEntry, len(batch))
	for i, p := range batch {
		entries[i] = p.entry
	}
	if err := j.store.appendJournal(ctx, entries, j.clock.Now()); err == nil {
		return
	}
	for _, e := range entries {
		if err := j.store.appendEntry(ctx, e); err != nil {
			j.logger.DebugContext(ctx, "sandbox journal: entry dropped (its sandbox is gone?)", "sandbox", e.Set, "err", err)
		}
	}
}

// close commits what is pending and stops the writer.
func (j *Journal) close() {
	j.once.Do(func() { close(j.stop) })
	<-j.done
}
