package fax

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// The time of a tenant is its tenant set's clock (Deps.ClockFor): a
// sandbox's own clock for a sandbox's account, the stack's for any other.
// The simulator's loop takes the steps of the accounts on the stack's clock;
// those of the accounts with a clock of their own are taken by Advance, when
// their clock moves (servers/sandbox). Leases stay in the stack's time:
// they are about replicas, not tenants.

// tenantNow is the time of the request's account, to the microsecond.
func (s *Server) tenantNow(ctx context.Context) time.Time {
	name := ""
	if st, _ := ctx.Value(authStateKey{}).(*authState); st != nil {
		name = st.accountName
	}
	return s.cfg.ClockFor(name).Now().UTC().Truncate(time.Microsecond)
}

// accountNow is the time of the account id, to the microsecond.
func (s *Server) accountNow(ctx context.Context, id string) time.Time {
	if !s.store.ownClocks {
		return s.now()
	}
	a, err := s.store.accountByID(ctx, id)
	if err != nil {
		return s.now() // gone: its fax is refused by the insert
	}
	return s.cfg.ClockFor(a.Name).Now().UTC().Truncate(time.Microsecond)
}

// faxClock is the clock of the tenant of fax id (the stack's when the fax
// is gone: its events are moot).
func (s *Server) faxClock(ctx context.Context, id string) clock.Clock {
	return s.ownerClock(ctx, `SELECT a.name FROM faxes AS f JOIN accounts AS a ON a.id = f.account_id WHERE f.id = ?`, id)
}

// instantClock is a clock that derives its time from the stack's (a
// sandbox's): At is its time at the instant the stack's clock read stack.
type instantClock interface {
	At(stack time.Time) time.Time
}

// tenantAt is clk's time (a tenant's) at the instant the stack's clock read
// stackNow, where clk derives its time from the stack's, so that a time
// noted in each clock names one instant whatever advance comes between two
// reads; another clock (the stack's own) is read now.
func tenantAt(clk clock.Clock, stackNow time.Time) time.Time {
	if c, ok := clk.(instantClock); ok {
		return c.At(stackNow)
	}
	return clk.Now()
}

// mediaClock is the clock of the tenant of stored document id (its links
// expire in its time; the stack's when it is gone: GetMedia answers 404).
func (s *Server) mediaClock(ctx context.Context, id string) clock.Clock {
	return s.ownerClock(ctx, `SELECT a.name FROM media AS m JOIN accounts AS a ON a.id = m.account_id WHERE m.id = ?`, id)
}

// ownerClock is the clock of the account whose name query reads for id,
// or the stack's when the accounts share it or the query finds none.
func (s *Server) ownerClock(ctx context.Context, query, id string) clock.Clock {
	if !s.store.ownClocks {
		return s.clock
	}
	var name string
	if err := s.store.db.QueryRowContext(ctx, query, id).Scan(&name); err != nil {
		return s.clock
	}
	return s.cfg.ClockFor(name)
}

// advanceTenants runs the work of the set's account due at now on its
// clock: it takes every simulator step due by now (the steps the clock
// passed, in order: each due StepInterval after the one before), then waits
// until each of the account's events is delivered, abandoned, or waits for
// a retry due after now. The steps are claimed as the simulator claims them,
// so replicas running it at once, or one finishing after another died, take
// each step once.
func advanceTenants(ctx context.Context, s *Server, set descriptor.TenantSet, now time.Time) error {
	a, err := s.store.accountByName(ctx, set.Name)
	if errors.Is(err, storeerr.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fax: advance %s: %w", set.Name, err)
	}
	now = now.UTC().Truncate(time.Microsecond)
	clk := s.cfg.ClockFor(set.Name)
	clockNow := func() time.Time {
		// A replica finishing another's advance may not have heard of the
		// new time yet: never earlier than now.
		if t := clk.Now().UTC().Truncate(time.Microsecond); t.After(now) {
			return t
		}
		return now
	}
	for {
		stackNow := s.clock.Now()
		if found, err := s.store.anyDueFaxOf(ctx, a.ID, now, stackNow); err != nil || !found {
			if err != nil {
				return fmt.Errorf("fax: advance %s: %w", set.Name, err)
			}
			break
		}
		due, err := s.store.claimDueFaxesOf(ctx, s.cfg.ReplicaID, a.ID, now, stackNow, stackNow.Add(s.cfg.Lease), advanceBatch)
		if err != nil {
			return fmt.Errorf("fax: advance %s: %w", set.Name, err)
		}
		if len(due) == 0 {
			break
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, simConcurrency)
		errs := make([]error, len(due))
		for i, f := range due {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				if err := s.step(ctx, f, clockNow, true); err != nil {
					errs[i] = err
					if rerr := s.store.releaseFax(context.WithoutCancel(ctx), f.ID, s.cfg.ReplicaID); rerr != nil {
						s.logger.ErrorContext(ctx, "fax advance: release", "fax_id", f.ID, "err", rerr)
					}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("fax: advance %s: %w", set.Name, err)
		}
	}
	s.wakeDelivery()
	return s.awaitDeliveries(ctx, a.ID, now)
}

// advanceBatch is how many due faxes Advance claims at once.
const advanceBatch = 64

// deliveryPoll is how often Advance looks whether the account's events
// went out when this replica records nothing (another replica sends them).
const deliveryPoll = 50 * time.Millisecond

// awaitDeliveries returns once none of the account's events waits to be
// sent at now (each is delivered, abandoned, or has its next retry after
// now), or ctx ends. It looks again whenever this replica records a
// delivery or an attempt, and every deliveryPoll.
func (s *Server) awaitDeliveries(ctx context.Context, accountID string, now time.Time) error {
	t := time.NewTicker(deliveryPoll)
	defer t.Stop()
	for {
		recorded := s.recorded.wait()
		n, err := s.store.unsettledEvents(ctx, accountID, now)
		if err != nil {
			return fmt.Errorf("fax: advance: %w", err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fax: advance: %d events not sent yet: %w", n, ctx.Err())
		case <-recorded:
		case <-t.C:
		}
	}
}

// signal wakes every waiter at once; its zero value is ready.
type signal struct {
	mu sync.Mutex
	c  chan struct{}
}

// wait returns a channel closed at the next fire.
func (g *signal) wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c == nil {
		g.c = make(chan struct{})
	}
	return g.c
}

// fire wakes the waiters.
func (g *signal) fire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c != nil {
		close(g.c)
		g.c = nil
	}
}

// claimDueFaxesOf claims for replica, until leaseUntil, up to limit faxes
// of the account whose next step is due at now (the account's time) and
// that no replica holds (or whose holder's lease has ended at stackNow),
// oldest first.
func (s *store) claimDueFaxesOf(ctx context.Context, replica, accountID string, now, stackNow, leaseUntil time.Time, limit int) ([]faxRow, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("claim due faxes: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `UPDATE faxes SET claimed_by = ?, lease_until = ? WHERE id IN (
			SELECT id FROM faxes WHERE account_id = ? AND next_step_at IS NOT NULL AND next_step_at <= ? AND deleted_at IS NULL
				AND (claimed_by IS NULL OR lease_until <= ?)
			ORDER BY next_step_at, id LIMIT ?
		) RETURNING `+faxColumns,
		replica, sqldb.Micros(leaseUntil), accountID, sqldb.Micros(now), sqldb.Micros(stackNow), limit)
	if err != nil {
		return nil, fmt.Errorf("claim due faxes: %w", err)
	}
	out, err := scanFaxes(rows)
	if err != nil {
		return nil, fmt.Errorf("claim due faxes: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("claim due faxes: %w", err)
	}
	return out, nil
}

// anyDueFaxOf reports whether claimDueFaxesOf would claim a fax (without
// the write transaction of a claim).
func (s *store) anyDueFaxOf(ctx context.Context, accountID string, now, stackNow time.Time) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM faxes WHERE account_id = ? AND next_step_at IS NOT NULL
		AND next_step_at <= ? AND deleted_at IS NULL AND (claimed_by IS NULL OR lease_until <= ?) LIMIT 1) AS due`,
		accountID, sqldb.Micros(now), sqldb.Micros(stackNow)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for due faxes: %w", err)
	}
	return n > 0, nil
}

// unsettledEvents counts the account's events waiting to be sent at now:
// neither delivered nor abandoned, and not behind a retry due after now
// (an event of the same fax, itself or one before it, whose last attempt's
// next_retry_at, in the account's time, is later: a fax's events go out in
// order).
func (s *store) unsettledEvents(ctx context.Context, accountID string, now time.Time) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox AS o
		WHERE o.fax_id IN (SELECT id FROM faxes WHERE account_id = ?)
			AND o.delivered_at IS NULL AND o.abandoned_at IS NULL
			AND NOT EXISTS (SELECT 1 FROM outbox AS p JOIN delivery_attempts AS d ON d.event_seq = p.seq AND d.attempt = p.attempts
				WHERE p.fax_id = o.fax_id AND p.delivered_at IS NULL AND p.abandoned_at IS NULL AND d.next_retry_at > ?)`,
		accountID, sqldb.Micros(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count unsent events: %w", err)
	}
	return n, nil
}
