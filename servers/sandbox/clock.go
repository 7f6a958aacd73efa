package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/servers/clock"
)

// Advancer runs the work of a sandbox's tenants in every API that is due at
// now on its clock (servers/stack: each API's descriptor Advance).
type Advancer func(ctx context.Context, set string, now time.Time) error

// advanceLease is how long (stack time) the replica that advanced a clock
// runs the work that became due alone; after it, every replica's driver
// finishes that work (the advancing replica died).
const advanceLease = 5 * time.Second

// DefaultDriveInterval is how often a replica runs the due work of the real
// clocks, and of the advances whose replica died.
const DefaultDriveInterval = time.Second

// driveConcurrency is how many sandboxes' due work a replica's driver runs
// at once.
const driveConcurrency = 4

// moveAttempts bounds the retries of an advance that raced another change
// of the same clock.
const moveAttempts = 10

// Clocks are the sandboxes' clocks: Clocks().For is the clock resolver of
// the APIs (descriptor.Deps.Clocks).
func (s *Server) Clocks() *Clocks { return s.clocks }

// GetSandboxClock answers the sandbox's clock.
func (s *Server) GetSandboxClock(ctx context.Context, req sandboxserver.GetSandboxClockRequestObject) (sandboxserver.GetSandboxClockResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	st, err := s.store.clock(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return sandboxserver.GetSandboxClock200JSONResponse(s.clockView(st)), nil
}

func (s *Server) clockView(st clockState) sandboxapi.SandboxClock {
	stackNow := s.clock.Now().Truncate(time.Microsecond)
	now := st.now(stackNow)
	return sandboxapi.SandboxClock{Mode: sandboxapi.ClockMode(st.Mode), Now: now.UTC(), Offset: now.Sub(stackNow).String()}
}

// MaxTime is the latest time a sandbox's clock reads. The APIs write
// instants in RFC 3339, whose years end at 9999, and compute expiries and
// retries ahead of a sandbox's now (hours at most): a year short of the end
// leaves them room. A change past it is refused; a real clock stops at it.
var MaxTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// clockChange reads the body of AdvanceSandboxClock: the new time of a
// clock reading now.
func clockChange(body *sandboxapi.ClockChange, now time.Time) (time.Time, error) {
	switch {
	case body == nil || (body.Advance == nil && body.Set == nil):
		return time.Time{}, errBadRequest("give exactly one of advance (a Go duration such as 10m) and set (an RFC 3339 instant)")
	case body.Advance != nil && body.Set != nil:
		return time.Time{}, errBadRequest("give advance or set, not both")
	case body.Advance != nil:
		d, err := time.ParseDuration(*body.Advance)
		if err != nil {
			return time.Time{}, errBadRequest("advance %q is not a Go duration such as 90s or 10m", *body.Advance)
		}
		if d < 0 {
			return time.Time{}, errBadRequest("advance %s is negative: a sandbox's time never goes back", d)
		}
		if d > MaxTime.Sub(now) {
			return time.Time{}, errBadRequest("advance %s would take the sandbox's time past %s, the latest it may read (the APIs write years up to 9999)",
				d, MaxTime.Format(time.RFC3339))
		}
		return now.Add(d), nil
	}
	t := *body.Set
	if t.Before(now) {
		return time.Time{}, errBadRequest("set %s is before the sandbox's time %s: a sandbox's time never goes back",
			t.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	if t.After(MaxTime) {
		return time.Time{}, errBadRequest("set %s is past %s, the latest time a sandbox may read (the APIs write years up to 9999)",
			t.UTC().Format(time.RFC3339Nano), MaxTime.Format(time.RFC3339))
	}
	return t, nil
}

// AdvanceSandboxClock moves the sandbox's clock forward and answers once
// the work that became due has run. The new time is committed first (with
// a lease): should this replica die before the work is done, the other
// replicas' drivers do it once the lease ends.
func (s *Server) AdvanceSandboxClock(ctx context.Context, req sandboxserver.AdvanceSandboxClockRequestObject) (sandboxserver.AdvanceSandboxClockResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	var to clockState
	for attempt := 0; ; attempt++ {
		from, err := s.store.clock(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		stackNow := s.clock.Now().UTC().Truncate(time.Microsecond)
		target, err := clockChange(req.Body, from.now(stackNow))
		if err != nil {
			return nil, err
		}
		target = target.UTC().Truncate(time.Microsecond)
		to = clockState{Mode: from.Mode, Base: target, Ref: stackNow, Due: &target, Lease: stackNow.Add(advanceLease)}
		moved, err := s.store.moveClock(ctx, r.ID, from, to)
		if err != nil {
			return nil, err
		}
		if moved {
			break
		}
		if attempt == moveAttempts {
			return nil, fmt.Errorf("advance sandbox %s: the clock kept changing meanwhile", r.ID)
		}
	}
	s.clocks.put(r.ID, to)
	if err := s.runDue(ctx, r.ID, *to.Due); err != nil {
		return nil, err
	}
	return sandboxserver.AdvanceSandboxClock200JSONResponse(s.clockView(to)), nil
}

// runDue runs the work of sandbox id due at now in every API, then records
// that it has.
func (s *Server) runDue(ctx context.Context, id string, now time.Time) error {
	if s.cfg.Advance != nil {
		if err := s.cfg.Advance(ctx, id, now); err != nil {
			return fmt.Errorf("advance sandbox %s: %w", id, err)
		}
	}
	return s.store.settle(ctx, id, now)
}

// drive runs, every DriveInterval until ctx ends, the due work of the real
// clocks (their time moves by itself) and of the advances whose replica
// died before the work was done; each sandbox's on its own goroutine, a
// few at once, one at a time per sandbox.
func (s *Server) drive(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, driveConcurrency)
	var mu sync.Mutex
	busy := map[string]bool{}
	if s.cfg.Advance == nil {
		return
	}
	for {
		t := clock.NewTimerAt(s.clock, s.clock.Now().Add(s.cfg.DriveInterval))
		poll := time.NewTimer(s.cfg.DriveInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			poll.Stop()
			return
		case <-t.C():
		case <-poll.C:
		}
		t.Stop()
		poll.Stop()
		stackNow := s.clock.Now()
		pending, err := s.store.pendingClocks(ctx, stackNow)
		if err != nil {
			if ctx.Err() == nil {
				s.logger.ErrorContext(ctx, "sandbox: list clocks", "err", err)
			}
			continue
		}
		for id, st := range pending {
			mu.Lock()
			if busy[id] {
				mu.Unlock()
				continue
			}
			busy[id] = true
			mu.Unlock()
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; mu.Lock(); delete(busy, id); mu.Unlock(); wg.Done() }()
				now := st.now(stackNow)
				if st.Due == nil {
					// A real clock's work: its steps are taken at once; its
					// deliveries are not waited for longer than a few rounds
					// (nobody waits for an answer).
					rctx, cancel := context.WithTimeout(ctx, 5*s.cfg.DriveInterval)
					defer cancel()
					if err := s.cfg.Advance(rctx, id, now); err != nil && rctx.Err() == nil {
						s.logger.ErrorContext(ctx, "sandbox: run due work", "sandbox", id, "err", err)
					}
					return
				}
				if st.Due.After(now) {
					now = *st.Due
				}
				if err := s.runDue(ctx, id, now); err != nil && ctx.Err() == nil && !errors.Is(err, errNoSandbox) {
					s.logger.ErrorContext(ctx, "sandbox: run due work", "sandbox", id, "err", err)
				}
			}()
		}
	}
}
