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
// (apiserver.Journal): the requests of the sandboxes' credentials. A
// request hands its entry over and goes on (waiting for a commit on every
// request would halve a busy client's throughput: BenchmarkJournalCost);
// one writer commits the entries in batches, in order, as soon as they come.
// Flush waits for what was handed over before it, so the sandbox API's
// journal reads (and resets and deletes) see every request this replica
// answered; through another replica an entry shows once its writer
// committed it, milliseconds later. A writer behind by maxPending entries
// makes requests wait for it.
type Journal struct {
	store   *store
	clock   clock.Clock
	logger  *slog.Logger
	enabled atomic.Bool
	// faults are the sandboxes' faults (TakeFault).
	faults *faultSet
	// clocks are the sandboxes' clocks: an entry's SetTime.
	clocks *Clocks
	// local keeps the requests of one set that is no sandbox's in memory
	// (KeepLocal); localSet is its name, read on every request.
	localMu  sync.Mutex
	local    localJournal
	localSet atomic.Pointer[string]

	mu      sync.Mutex
	pending []pendingEntry
	kick    chan struct{}
	// urgent cuts the writer's linger short: a Flush waits, or a batch is
	// full.
	urgent chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

var _ apiserver.Journal = (*Journal)(nil)

type pendingEntry struct {
	entry apiserver.JournalEntry
	// marker is a Flush's place in the queue: nothing to write; done is
	// closed once what was queued before it is committed (entries have
	// none: a request that must wait queues a marker).
	marker bool
	done   chan struct{}
}

// maxBatch is the most entries committed together; maxPending the most
// waiting before requests wait for the writer.
const (
	maxBatch   = 256
	maxPending = 4096
)

// linger is how long the writer waits for more entries before it commits
// a batch (unless a Flush waits or the batch is full): a commit costs about
// as much as the entries it stores, so fewer, larger ones leave the
// requests the CPU.
const linger = 10 * time.Millisecond

func newJournal(st *store, c clock.Clock, logger *slog.Logger) *Journal {
	j := &Journal{store: st, clock: c, logger: logger, kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	j.enabled.Store(true)
	go j.run()
	return j
}

// SetEnabled turns journaling on or off (on by default): the benchmark of
// what the journal costs measures both in one run.
func (j *Journal) SetEnabled(on bool) { j.enabled.Store(on) }

// Journals reports whether set is a sandbox's, while journaling is on, or
// the set KeepLocal names.
func (j *Journal) Journals(set string) bool {
	return j.enabled.Load() && strings.HasPrefix(set, IDPrefix) || j.keptLocally(set)
}

// Now is the stack's clock.
func (j *Journal) Now() time.Time { return j.clock.Now() }

// Record queues e for the writer; it waits for the commit only while the
// writer is maxPending entries behind (or until ctx ends).
func (j *Journal) Record(ctx context.Context, e apiserver.JournalEntry) {
	e.SetTime = j.sandboxTime(ctx, e.Set, e.Time)
	if j.recordLocal(e) {
		return
	}
	if j.enqueue(pendingEntry{entry: e}) >= maxPending {
		j.Flush(ctx)
	}
}

// sandboxTime is the instant at of the stack's clock on the clock of
// sandbox id (at itself when there is no such sandbox).
func (j *Journal) sandboxTime(ctx context.Context, id string, at time.Time) time.Time {
	if j.clocks == nil {
		return at
	}
	st, ok, _ := j.clocks.state(ctx, id)
	if !ok {
		return at
	}
	return st.now(at)
}

// Flush waits until every entry queued before it is committed (or ctx
// ends).
func (j *Journal) Flush(ctx context.Context) {
	p := pendingEntry{marker: true, done: make(chan struct{})}
	j.enqueue(p)
	j.hurry()
	j.wait(ctx, p)
}

// enqueue queues p, wakes the writer and returns how many are waiting.
func (j *Journal) enqueue(p pendingEntry) int {
	j.mu.Lock()
	j.pending = append(j.pending, p)
	n := len(j.pending)
	j.mu.Unlock()
	select {
	case j.kick <- struct{}{}:
	default:
	}
	if n >= maxBatch {
		j.hurry()
	}
	return n
}

// hurry cuts the writer's linger short.
func (j *Journal) hurry() {
	select {
	case j.urgent <- struct{}{}:
	default:
	}
}

func (j *Journal) wait(ctx context.Context, p pendingEntry) {
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
			t := time.NewTimer(linger)
			select {
			case <-t.C:
			case <-j.urgent:
			case <-j.stop:
			}
			t.Stop()
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
		// all is the queue's array when the batch takes it all: it is
		// the queue's again once written (unless a new one began).
		var all []pendingEntry
		if n == len(j.pending) {
			all = j.pending
		}
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
			if p.marker {
				close(p.done)
			}
		}
		if all != nil {
			clear(all)
			j.mu.Lock()
			if j.pending == nil {
				j.pending = all[:0]
			}
			j.mu.Unlock()
		}
	}
}

// write commits batch, one row per sandbox; when that fails (a sandbox was
// deleted meanwhile), each sandbox's row is tried alone, and those refused
// are dropped.
func (j *Journal) write(batch []pendingEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	entries := make([]apiserver.JournalEntry, 0, len(batch))
	for _, p := range batch {
		if !p.marker {
			entries = append(entries, p.entry)
		}
	}
	if len(entries) == 0 {
		return
	}
	groups := groupBySandbox(entries)
	now := j.clock.Now()
	if err := j.store.appendJournal(ctx, groups, now); err == nil || len(groups) == 1 {
		if err != nil {
			j.logger.DebugContext(ctx, "sandbox journal: entries dropped (their sandbox is gone?)", "sandbox", groups[0].sandbox, "err", err)
		}
		return
	}
	for _, g := range groups {
		if err := j.store.appendJournal(ctx, []journalGroup{g}, now); err != nil {
			j.logger.DebugContext(ctx, "sandbox journal: entries dropped (their sandbox is gone?)", "sandbox", g.sandbox, "err", err)
		}
	}
}

// close commits what is pending and stops the writer.
func (j *Journal) close() {
	j.once.Do(func() { close(j.stop) })
	<-j.done
}
