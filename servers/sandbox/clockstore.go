package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/apistack/apistack/servers/internal/sqldb"
)

// clockState is a sandbox's clock as stored: its time is Base while it is
// frozen, and Base plus the stack time passed since Ref while it is real.
// Due is the time whose due work has yet to run (an advance not finished),
// Lease the stack time until which the replica that advanced runs it.
type clockState struct {
	Mode      string
	Base, Ref time.Time
	Due       *time.Time
	Lease     time.Time
}

// now is the sandbox's time when the stack's reads stack.
func (c clockState) now(stack time.Time) time.Time {
	if c.Mode == ClockFrozen {
		return c.Base
	}
	// A real clock runs with the stack's time, and stops at the latest
	// time a sandbox may read.
	if now := c.Base.Add(stack.Sub(c.Ref)); now.Before(MaxTime) {
		return now
	}
	return MaxTime
}

// same reports whether c and o tell the same time.
func (c clockState) same(o clockState) bool {
	return c.Mode == o.Mode && c.Base.Equal(o.Base) && c.Ref.Equal(o.Ref)
}

const clockColumns = `id, clock, clock_base, clock_ref, clock_due, clock_lease`

func scanClock(row interface{ Scan(...any) error }) (string, clockState, error) {
	var id string
	var c clockState
	var base, ref, lease int64
	var due sql.NullInt64
	if err := row.Scan(&id, &c.Mode, &base, &ref, &due, &lease); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", c, errNoSandbox
		}
		return "", c, fmt.Errorf("read sandbox clock: %w", err)
	}
	c.Base, c.Ref, c.Lease = sqldb.Time(base), sqldb.Time(ref), sqldb.Time(lease)
	if due.Valid {
		t := sqldb.Time(due.Int64)
		c.Due = &t
	}
	return id, c, nil
}

// clock reads the clock of the sandbox id (in any state).
func (s *store) clock(ctx context.Context, id string) (clockState, error) {
	_, c, err := scanClock(s.db.QueryRowContext(ctx, `SELECT `+clockColumns+` FROM sandboxes WHERE id = ?`, id))
	return c, err
}

// moveClock replaces the clock of the ready sandbox id by to when it still
// is from; false when another change came first.
func (s *store) moveClock(ctx context.Context, id string, from, to clockState) (bool, error) {
	return s.changedRow(ctx, "move sandbox clock", `UPDATE sandboxes SET clock_base = ?, clock_ref = ?, clock_due = ?, clock_lease = ?
		WHERE id = ? AND state = ? AND clock_base = ? AND clock_ref = ?`,
		sqldb.Micros(to.Base), sqldb.Micros(to.Ref), sqldb.NullMicros(to.Due), sqldb.Micros(to.Lease),
		id, stateReady, sqldb.Micros(from.Base), sqldb.Micros(from.Ref))
}

// settle records that the work due by due has run, unless a later advance
// is pending meanwhile.
func (s *store) settle(ctx context.Context, id string, due time.Time) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET clock_due = NULL WHERE id = ? AND clock_due <= ?`,
		id, sqldb.Micros(due)); err != nil {
		return fmt.Errorf("settle sandbox clock: %w", err)
	}
	return nil
}

// pendingClocks lists the ready sandboxes whose due work a replica's
// driver runs at stack time now: every real one, and the frozen ones with
// an advance whose lease ended before its work was done.
func (s *store) pendingClocks(ctx context.Context, now time.Time) (map[string]clockState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+clockColumns+` FROM sandboxes
		WHERE state = ? AND (clock = ? OR (clock_due IS NOT NULL AND clock_lease <= ?))`,
		stateReady, ClockReal, sqldb.Micros(now))
	if err != nil {
		return nil, fmt.Errorf("list sandbox clocks: %w", err)
	}
	defer rows.Close()
	out := map[string]clockState{}
	for rows.Next() {
		id, c, err := scanClock(rows)
		if err != nil {
			return nil, err
		}
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sandbox clocks: %w", err)
	}
	return out, nil
}
