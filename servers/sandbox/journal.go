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
	// spare is the queue's other array: the writer takes the queue and
	// gives the array back once written, so queueing allocates nothing.
	spare []pendingEntry
	kick  chan struct{}
	// urgent cuts the writer's linger short: a Flush waits, or a batch is
	// full.
	urgent chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once

	// The writer's own: its encoder, its list of a batch's entries, and
	// when (on the stack's clock) it last recorded each sandbox's use.
	enc     entryEncoder
	entries []apiserver.JournalEntry
	touched map[string]time.Time
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

// maxBatch is the most entries committed together (a row's places:
// seqShift); maxPending the most waiting before requests wait for the
// writer.
const (
	maxBatch   = 1 << seqShift
	maxPending = 4 * maxBatch
)

// linger is how long the writer waits for more entries before it commits
// a batch (unless a Flush waits or the batch is full): a commit costs about
// as much as the entries it stores, so fewer, larger ones leave the
// requests the CPU (BenchmarkJournalCost). Another replica sees an entry
// about linger after its request.
const linger = 25 * time.Millisecond

// touchEvery is how often at most (on the stack's clock) the writer
// records a sandbox's use, which its TTL counts from: a row's update per
// commit would cost more than the entries.
const touchEvery = time.Second

func newJournal(st *store, c clock.Clock, logger *slog.Logger) *Journal {
	j := &Journal{store: st, clock: c, logger: logger, kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), touched: map[string]time.Time{}}
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

// Record queues e for the writer, which redacts, encodes and stores it off
// the request's path; it waits for the commit only while the writer is
// maxPending entries behind (or until ctx ends).
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
		queue := j.pending
		j.pending, j.spare = j.spare[:0], nil
		j.mu.Unlock()
		if len(queue) == 0 {
			j.mu.Lock()
			j.spare = queue[:0]
			j.mu.Unlock()
			return
		}
		for rest := queue; len(rest) > 0; {
			batch := rest[:min(len(rest), maxBatch)]
			rest = rest[len(batch):]
			j.write(batch)
			for _, p := range batch {
				if p.marker {
					close(p.done)
				}
			}
		}
		clear(queue)
		j.mu.Lock()
		j.spare = queue[:0]
		j.mu.Unlock()
	}
}

// write commits batch, one row per sandbox; when that fails (a sandbox was
// deleted meanwhile), each sandbox's row is tried alone, and those refused
// are dropped. Then the entries' buffers go back to the requests.
func (j *Journal) write(batch []pendingEntry) {
	entries := j.entries[:0]
	for _, p := range batch {
		if !p.marker {
			entries = append(entries, p.entry)
		}
	}
	j.entries = entries
	defer func() {
		for i := range entries {
			entries[i].Release()
		}
		clear(entries)
	}()
	if len(entries) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	groups := groupBySandbox(entries)
	now := j.clock.Now()
	j.touches(groups, now)
	if err := j.store.appendJournal(ctx, &j.enc, groups, now); err == nil || len(groups) == 1 {
		if err != nil {
			j.logger.DebugContext(ctx, "sandbox journal: entries dropped (their sandbox is gone?)", "sandbox", groups[0].sandbox, "err", err)
		}
		return
	}
	for _, g := range groups {
		if err := j.store.appendJournal(ctx, &j.enc, []journalGroup{g}, now); err != nil {
			j.logger.DebugContext(ctx, "sandbox journal: entries dropped (their sandbox is gone?)", "sandbox", g.sandbox, "err", err)
		}
	}
}

// touches marks the groups whose sandbox's use the commit records at now:
// those not recorded by this writer in the last touchEvery.
func (j *Journal) touches(groups []journalGroup, now time.Time) {
	if len(j.touched) > 1024 {
		for id, at := range j.touched {
			if now.Sub(at) >= touchEvery || at.After(now) {
				delete(j.touched, id)
			}
		}
	}
	for i, g := range groups {
		at, ok := j.touched[g.sandbox]
		if ok && now.Sub(at) < touchEvery && !at.After(now) {
			continue
		}
		groups[i].touch = true
		j.touched[g.sandbox] = now
	}
}

// close commits what is pending and stops the writer.
func (j *Journal) close() {
	j.once.Do(func() { close(j.stop) })
	<-j.done
}
