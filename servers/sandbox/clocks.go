package sandbox

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// Clocks are the sandboxes' clocks as one replica sees them: each read from
// the sandbox database once and kept, dropped when another replica commits
// to it (sqldb.DB.OnRemoteCommit: PostgreSQL's LISTEN/NOTIFY) and replaced
// at once when this replica moves one. A clock whose timers wait is read
// again right after each such commit, so its timers fire on every replica
// when any replica advances it. It is safe for concurrent use.
type Clocks struct {
	db     *sqldb.DB
	store  *store
	stack  clock.Clock
	logger *slog.Logger

	mu      sync.Mutex
	gen     uint64 // counts the drops: a read older than one is not kept
	entries map[string]*clockEntry
	refresh chan struct{}
}

// clockEntry is one sandbox's clock on this replica.
type clockEntry struct {
	state   clockState
	known   bool          // state holds what the database held
	gone    bool          // no such sandbox
	changed chan struct{} // closed when state changes or may have
	timers  int           // how many timers wait on the clock
}

func newClocks(db *sqldb.DB, st *store, stack clock.Clock, logger *slog.Logger) *Clocks {
	c := &Clocks{db: db, store: st, stack: stack, logger: logger,
		entries: map[string]*clockEntry{}, refresh: make(chan struct{}, 1)}
	db.OnRemoteCommit(c.drop)
	return c
}

// For returns the clock of the tenant set named set: its sandbox's clock
// for a sandbox's set, the stack's clock for any other.
func (c *Clocks) For(set string) clock.Clock {
	if !descriptor.IsSandboxSet(set) {
		return c.stack
	}
	return &sandboxClock{c: c, id: set}
}

// drop forgets every clock (another replica committed): the ones timers
// wait on are read again by run.
func (c *Clocks) drop() {
	c.mu.Lock()
	c.gen++
	waited := false
	for id, e := range c.entries {
		if e.timers == 0 {
			delete(c.entries, id)
			continue
		}
		e.known = false
		waited = true
	}
	c.mu.Unlock()
	if waited {
		select {
		case c.refresh <- struct{}{}:
		default:
		}
	}
}

// run reads again the clocks timers wait on after drop forgot them, until
// ctx ends.
func (c *Clocks) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.refresh:
		}
		c.mu.Lock()
		var ids []string
		for id, e := range c.entries {
			if !e.known {
				ids = append(ids, id)
			}
		}
		c.mu.Unlock()
		for _, id := range ids {
			c.state(ctx, id)
		}
	}
}

// put records st as the clock of id (this replica moved it), firing the
// timers it reaches.
func (c *Clocks) put(id string, st clockState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(id)
	e.state, e.known, e.gone = st, true, false
	close(e.changed)
	e.changed = make(chan struct{})
}

// forget drops the clock of id (its sandbox is gone).
func (c *Clocks) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[id]; e != nil {
		e.known = false
		close(e.changed)
		e.changed = make(chan struct{})
		if e.timers == 0 {
			delete(c.entries, id)
		}
	}
}

func (c *Clocks) entry(id string) *clockEntry {
	e := c.entries[id]
	if e == nil {
		e = &clockEntry{changed: make(chan struct{})}
		c.entries[id] = e
	}
	return e
}

// state returns the clock of sandbox id, false when there is no such
// sandbox (or it could not be read: the stack's time is then the best
// guess), and a channel closed when the clock changes.
func (c *Clocks) state(ctx context.Context, id string) (clockState, bool, <-chan struct{}) {
	c.mu.Lock()
	e := c.entries[id]
	if e != nil && e.known && c.db.Fresh() {
		defer c.mu.Unlock()
		return e.state, !e.gone, e.changed
	}
	gen := c.gen
	c.mu.Unlock()

	st, err := c.store.clock(context.WithoutCancel(ctx), id)
	gone := errors.Is(err, errNoSandbox)
	if err != nil && !gone {
		c.logger.ErrorContext(ctx, "sandbox: read clock", "sandbox", id, "err", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e = c.entry(id)
	if err == nil || gone {
		changed := !e.known || e.gone != gone || !e.state.same(st)
		if c.gen == gen {
			e.state, e.gone, e.known = st, gone, true
		}
		if changed {
			close(e.changed)
			e.changed = make(chan struct{})
		}
	}
	return st, err == nil, e.changed
}

// hold counts a timer waiting on the clock of id (by n = 1 or -1).
func (c *Clocks) hold(id string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(id)
	e.timers += n
	if e.timers == 0 && !e.known {
		delete(c.entries, id)
	}
}

// sandboxClock is the clock of one sandbox.
type sandboxClock struct {
	c  *Clocks
	id string
}

// Now returns the sandbox's time (the stack's when the sandbox is gone).
func (k *sandboxClock) Now() time.Time {
	return k.At(k.c.stack.Now())
}

// At returns the sandbox's time at the instant the stack's clock read
// stack (the stack's own time when the sandbox is gone): a time noted in
// the sandbox's clock and one noted in the stack's then name one instant,
// whatever advance came between two reads.
func (k *sandboxClock) At(stack time.Time) time.Time {
	st, ok, _ := k.c.state(context.Background(), k.id)
	if !ok {
		return stack
	}
	return st.now(stack)
}

// clockPoll is how often a waiting timer reads its clock again in any case
// (while this replica cannot hear the others' commits).
const clockPoll = time.Second

// NewTimerAt returns a timer firing when the sandbox's time reaches
// deadline: when a replica advances or sets the clock past it, or, for a
// real clock, when the stack's time brings it there.
func (k *sandboxClock) NewTimerAt(deadline time.Time) clock.Timer {
	t := &sandboxTimer{c: make(chan time.Time, 1), stop: make(chan struct{})}
	k.c.hold(k.id, 1)
	go func() {
		defer k.c.hold(k.id, -1)
		for {
			st, ok, changed := k.c.state(context.Background(), k.id)
			stackNow := k.c.stack.Now()
			now := stackNow
			if ok {
				now = st.now(stackNow)
			}
			if !ok || !deadline.After(now) {
				t.fire(now)
				return
			}
			var wall clock.Timer
			var wallC <-chan time.Time
			if st.Mode == ClockReal {
				wall = clock.NewTimerAt(k.c.stack, st.Ref.Add(deadline.Sub(st.Base)))
				wallC = wall.C()
			}
			poll := time.NewTimer(clockPoll)
			select {
			case <-t.stop:
			case <-changed:
			case <-wallC:
			case <-poll.C:
			}
			poll.Stop()
			if wall != nil {
				wall.Stop()
			}
			select {
			case <-t.stop:
				return
			default:
			}
		}
	}()
	return t
}

// sandboxTimer is a timer of a sandboxClock.
type sandboxTimer struct {
	c     chan time.Time
	stop  chan struct{}
	state atomic.Int32 // 0 waiting, 1 fired, 2 stopped
}

func (t *sandboxTimer) C() <-chan time.Time { return t.c }

func (t *sandboxTimer) fire(now time.Time) {
	if t.state.CompareAndSwap(0, 1) {
		t.c <- now
	}
}

// Stop prevents the timer from firing; it reports whether it did.
func (t *sandboxTimer) Stop() bool {
	if t.state.CompareAndSwap(0, 2) {
		close(t.stop)
		return true
	}
	return false
}
