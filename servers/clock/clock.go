// Package clock lets the servers read the time through an interface, so tests
// (apistack's own and those of the services that call its APIs) can
// move time forward (token expiry, signed-link expiry, rate-limit refill,
// the fax simulator's steps, webhook retries) without sleeping.
//
// A server that waits (the fax simulator, the webhook sender) waits on a
// Timer of its Clock (NewTimerAt): System's timers are the runtime's, a
// Fake's fire when Advance or Set moves it to their deadline.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
	Now() time.Time
}

// Timer is a one-shot timer: C receives once, when the timer fires.
type Timer interface {
	// C is the channel the firing time is sent on (buffered: the timer
	// never blocks).
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// TimerClock is a Clock that also makes timers in its own time. System and
// Fake are TimerClocks; a Clock that is not one gets the runtime's timers.
type TimerClock interface {
	Clock
	// NewTimerAt returns a timer that fires once the clock reads deadline
	// or later (at once when it already does).
	NewTimerAt(deadline time.Time) Timer
}

// NewTimerAt returns a timer of c firing at deadline in c's time. Waiting for
// an absolute deadline, not a duration, means a Fake moved between reading
// Now and making the timer cannot be missed.
func NewTimerAt(c Clock, deadline time.Time) Timer {
	if tc, ok := c.(TimerClock); ok {
		return tc.NewTimerAt(deadline)
	}
	return systemTimer{time.NewTimer(deadline.Sub(c.Now()))}
}

// System is the real wall clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// NewTimerAt returns a runtime timer firing at deadline.
func (System) NewTimerAt(deadline time.Time) Timer {
	return systemTimer{time.NewTimer(time.Until(deadline))}
}

type systemTimer struct{ t *time.Timer }

func (s systemTimer) C() <-chan time.Time { return s.t.C }
func (s systemTimer) Stop() bool          { return s.t.Stop() }

// Fake is a Clock that only moves when told to. Its timers fire when Advance
// or Set moves it to their deadline. It is safe for concurrent use.
type Fake struct {
	mu       sync.Mutex
	now      time.Time
	timers   []*fakeTimer
	advanced chan struct{} // closed and replaced on every move
	waiting  chan struct{} // closed and replaced when a timer starts waiting
	// follow, when set, moves the clock this fake mirrors (Follow).
	follow func(d time.Duration, to time.Time, progress func(time.Time)) time.Time
}

// Follow makes f mirror a clock kept elsewhere (a sandbox's clock on a
// running apistack): from then on Advance(d) calls move(d, time.Time{},
// progress) and Set(t) calls move(0, t, progress), outside f's lock; move
// calls progress(t) to move f to t as it moves the other clock (ahead of
// each of its steps), and f ends at the time move answers (move answers the
// other clock's time, having reported why, when it could not move it).
func (f *Fake) Follow(move func(d time.Duration, to time.Time, progress func(time.Time)) time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.follow = move
}

// followed moves the followed clock, if any, and reports whether there is
// one.
func (f *Fake) followed(d time.Duration, to time.Time) bool {
	f.mu.Lock()
	move := f.follow
	f.mu.Unlock()
	if move == nil {
		return false
	}
	progress := func(t time.Time) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.moveLocked(t)
	}
	progress(move(d, to, progress))
	return true
}

// NewFake returns a Fake clock set to now.
func NewFake(now time.Time) *Fake { return &Fake{now: now, advanced: make(chan struct{})} }

// Now returns the fake's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake clock forward by d, firing the timers it reaches.
func (f *Fake) Advance(d time.Duration) {
	if f.followed(d, time.Time{}) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.moveLocked(f.now.Add(d))
}

// Set moves the fake clock to t, firing the timers it reaches.
func (f *Fake) Set(t time.Time) {
	if f.followed(0, t) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.moveLocked(t)
}

// Timers returns how many timers wait for a later time: a test can wait
// for a server's loop to be waiting before it moves the clock.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// NextDeadline returns the earliest deadline of the waiting timers, and
// false when none waits.
func (f *Fake) NextDeadline() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return time.Time{}, false
	}
	return f.timers[0].deadline, true
}

// Moved returns a channel closed the next time the clock moves.
func (f *Fake) Moved() <-chan struct{} { return f.next(&f.advanced) }

// Waiting returns a channel closed the next time a timer starts waiting.
func (f *Fake) Waiting() <-chan struct{} { return f.next(&f.waiting) }

// next returns the channel *ch, made when there is none: the one the next
// happening of its event closes (see happened).
func (f *Fake) next(ch *chan struct{}) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *ch == nil {
		*ch = make(chan struct{})
	}
	return *ch
}

// AdvanceToNextTimer moves the clock to the earliest waiting timer's
// deadline, firing it, when that deadline is at most within from now. It
// reports whether it moved the clock.
func (f *Fake) AdvanceToNextTimer(within time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 || f.timers[0].deadline.Sub(f.now) > within {
		return false
	}
	f.moveLocked(f.timers[0].deadline)
	return true
}

// NewTimerAt returns a timer that fires when the fake reaches deadline.
func (f *Fake) NewTimerAt(deadline time.Time) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, deadline: deadline, c: make(chan time.Time, 1)}
	if !deadline.After(f.now) {
		t.c <- f.now
		return t
	}
	i := sort.Search(len(f.timers), func(i int) bool { return f.timers[i].deadline.After(deadline) })
	f.timers = append(f.timers, nil)
	copy(f.timers[i+1:], f.timers[i:])
	f.timers[i] = t
	happened(&f.waiting)
	return t
}

func (f *Fake) moveLocked(t time.Time) {
	f.now = t
	fired := 0
	for _, tm := range f.timers {
		if tm.deadline.After(t) {
			break
		}
		tm.c <- t
		fired++
	}
	f.timers = append(f.timers[:0], f.timers[fired:]...)
	happened(&f.advanced)
}

// happened closes *ch, telling its event to whoever waits on it, and puts a
// new channel in its place for the next one.
func happened(ch *chan struct{}) {
	if *ch != nil {
		close(*ch)
	}
	*ch = make(chan struct{})
}

type fakeTimer struct {
	f        *Fake
	deadline time.Time
	c        chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	for i, o := range t.f.timers {
		if o == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			return true
		}
	}
	return false
}
