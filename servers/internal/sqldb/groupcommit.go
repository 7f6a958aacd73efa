package sqldb

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// GroupCommit commits concurrent callers' writes together: while one batch
// is on its way, the writes arriving queue, and the next batch commits all
// of them (at most Max) in one call of Commit, typically one transaction in
// one round trip (Pipeline). On PostgreSQL, where each transaction costs a
// round trip, a commit and a commit notification to every replica, n
// concurrent writes then cost one of each. Each caller waits for its
// batch and gets its own outcome. The zero value is not usable: set
// Commit. It is safe for concurrent use.
type GroupCommit[T any] struct {
	// Commit commits batch and returns each member's error, in order. It
	// runs on a goroutine of its own, with a context carrying the first
	// member's values, no cancellation, and Timeout.
	Commit func(ctx context.Context, batch []T) []error
	// Max bounds a batch (0: 64).
	Max int
	// Timeout bounds a batch's Commit (0: 10 s; below 0: no bound, for a
	// Commit whose members bound their own work).
	Timeout time.Duration
	// Gather, when above 0, lets the writes on their way join a batch
	// before it starts: the batch yields the processor (runtime.Gosched)
	// while the writes waiting keep growing, at most Gather times, so the
	// goroutines already running reach their write first. It costs no
	// waiting when nothing else runs (a lone write starts at once) and
	// makes batches larger where the commit, not the wait, is the cost
	// (SQLite: the commit is CPU in this process).
	Gather int

	mu      sync.Mutex
	running bool
	waiting []*groupMember[T]
}

type groupMember[T any] struct {
	ctx  context.Context
	item T
	err  error
	done chan struct{}
}

// Do commits item in a batch with the concurrent writes and returns its
// outcome. A caller whose ctx ends before its batch starts gets ctx's error
// and item is not committed; once its batch started, it waits for the
// outcome whatever its ctx, so an error always means item was not
// committed (as far as Commit tells).
func (g *GroupCommit[T]) Do(ctx context.Context, item T) error {
	m := &groupMember[T]{ctx: ctx, item: item, done: make(chan struct{})}
	g.mu.Lock()
	g.waiting = append(g.waiting, m)
	if !g.running {
		g.running = true
		go g.run()
	}
	g.mu.Unlock()
	<-m.done
	return m.err
}

// run commits batches until no write waits.
func (g *GroupCommit[T]) run() {
	most := g.Max
	if most <= 0 {
		most = 64
	}
	for {
		g.gather(most)
		g.mu.Lock()
		n := min(len(g.waiting), most)
		if n == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		batch := g.waiting[:n:n]
		g.waiting = g.waiting[n:]
		g.mu.Unlock()
		g.commit(batch)
		for _, m := range batch {
			close(m.done)
		}
	}
}

// gather yields while the writes waiting keep growing (see Gather): it
// stops after two yields in a row that brought none.
func (g *GroupCommit[T]) gather(most int) {
	g.mu.Lock()
	n := len(g.waiting)
	g.mu.Unlock()
	idle := 0
	for range g.Gather {
		if n >= most || idle == 2 {
			return
		}
		runtime.Gosched()
		g.mu.Lock()
		m := len(g.waiting)
		g.mu.Unlock()
		if m == n {
			idle++
		} else {
			idle = 0
		}
		n = m
	}
}

// commit commits the members of batch whose context is still alive.
func (g *GroupCommit[T]) commit(batch []*groupMember[T]) {
	live := make([]*groupMember[T], 0, len(batch))
	items := make([]T, 0, len(batch))
	for _, m := range batch {
		if err := m.ctx.Err(); err != nil {
			m.err = err
			continue
		}
		live, items = append(live, m), append(items, m.item)
	}
	if len(live) == 0 {
		return
	}
	timeout := g.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx := context.WithoutCancel(live[0].ctx)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	errs := g.Commit(ctx, items)
	for i, m := range live {
		if i < len(errs) {
			m.err = errs[i]
		}
	}
}
