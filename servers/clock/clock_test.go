package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/clock"
)

var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fired(t clock.Timer) bool {
	select {
	case <-t.C():
		return true
	default:
		return false
	}
}

func TestFake_TimersFireWhenTheClockReachesTheirDeadline(t *testing.T) {
	f := clock.NewFake(start)
	late := clock.NewTimerAt(f, start.Add(2*time.Minute))
	early := clock.NewTimerAt(f, start.Add(time.Minute))
	assert.Equal(t, 2, f.Timers())
	next, ok := f.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, start.Add(time.Minute), next)

	f.Advance(59 * time.Second)
	assert.False(t, fired(early))
	f.Advance(time.Second)
	assert.True(t, fired(early))
	assert.False(t, fired(late))
	f.Set(start.Add(time.Hour))
	assert.True(t, fired(late))
	assert.Equal(t, 0, f.Timers())
}

func TestFake_ATimerForAPassedDeadlineFiresAtOnce(t *testing.T) {
	f := clock.NewFake(start)
	// A loop that read Now before the test moved the clock still wakes.
	readAt := f.Now()
	f.Advance(time.Minute)
	assert.True(t, fired(clock.NewTimerAt(f, readAt.Add(time.Second))))
}

func TestFake_StopRemovesTheTimer(t *testing.T) {
	f := clock.NewFake(start)
	tm := clock.NewTimerAt(f, start.Add(time.Second))
	assert.True(t, tm.Stop())
	assert.False(t, tm.Stop())
	f.Advance(time.Hour)
	assert.False(t, fired(tm))
}

func TestFake_WaitingAndMovedAreClosedOnTheirEvent(t *testing.T) {
	f := clock.NewFake(start)
	waiting, moved := f.Waiting(), f.Moved()
	clock.NewTimerAt(f, start.Add(time.Second))
	<-waiting
	assert.False(t, f.AdvanceToNextTimer(time.Millisecond), "the timer is further than 1ms")
	assert.True(t, f.AdvanceToNextTimer(time.Second))
	<-moved
	assert.Equal(t, start.Add(time.Second), f.Now())
}

func TestNewTimerAt_SystemAndPlainClocksUseRealTimers(t *testing.T) {
	for _, c := range []clock.Clock{clock.System{}, plain{}} {
		tm := clock.NewTimerAt(c, c.Now().Add(-time.Second))
		<-tm.C() // a passed deadline fires at once
		tm = clock.NewTimerAt(c, c.Now().Add(time.Hour))
		assert.True(t, tm.Stop())
	}
}

// plain is a Clock without timers of its own.
type plain struct{}

func (plain) Now() time.Time { return time.Now() }

// A followed fake hands each Advance and Set to the other clock, takes the
// time it answers as its own, and fires its timers as that time passes them.
func TestFake_FollowHandsEachMoveToTheOtherClockAndTakesItsAnswer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := clock.NewFake(t0)
	type move struct {
		d  time.Duration
		to time.Time
	}
	var moves []move
	other := t0.Add(time.Hour) // the other clock is ahead
	f.Follow(func(d time.Duration, to time.Time, _ func(time.Time)) time.Time {
		moves = append(moves, move{d, to})
		if to.IsZero() {
			other = other.Add(d)
		} else {
			other = to
		}
		return other
	})
	timer := f.NewTimerAt(t0.Add(90 * time.Minute))
	f.Advance(time.Minute)
	assert.Equal(t, t0.Add(61*time.Minute), f.Now(), "the other clock's answer")
	select {
	case <-timer.C():
		t.Fatal("fired early")
	default:
	}
	f.Set(t0.Add(2 * time.Hour))
	assert.Equal(t, t0.Add(2*time.Hour), f.Now())
	select {
	case <-timer.C():
	default:
		t.Fatal("a timer passed by a followed move did not fire")
	}
	assert.Equal(t, []move{{time.Minute, time.Time{}}, {0, t0.Add(2 * time.Hour)}}, moves)
}
