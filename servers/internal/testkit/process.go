// Package testkit holds the helpers that the servers' tests in several
// packages share: what a test repeats to start, reach and stop what it tests.
package testkit

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Stop says how a Process is ended.
type Stop struct {
	// Signal is sent first (SIGTERM when nil).
	Signal os.Signal
	// Group sends it (and the kill) to the process's whole group: Start
	// then runs the process in a group of its own, so a program that
	// starts others (node, a shell's jobs) ends with them.
	Group bool
	// Grace is how long the process has to end before it is killed (10 s
	// when 0).
	Grace time.Duration
}

// Process is a program a test runs until it ends.
type Process struct {
	// Cmd is the started command.
	Cmd    *exec.Cmd
	stop   Stop
	exited chan struct{}
	err    error
}

// Start starts cmd and ends it as stop says when t ends (unless it has
// ended before). When onFailure is not nil and t failed, what it returns
// is logged after the process ended, headed by name.
func Start(t testing.TB, cmd *exec.Cmd, stop Stop, name string, onFailure func() string) *Process {
	t.Helper()
	if stop.Group {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setpgid = true
	}
	require.NoError(t, cmd.Start(), "start %s", name)
	p := &Process{Cmd: cmd, stop: stop, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.End()
		if onFailure != nil && t.Failed() {
			t.Logf("%s:\n%s", name, onFailure())
		}
	})
	return p
}

// Exited is closed when the process has ended; Err is then its exit status.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is the process's exit status, once Exited is closed.
func (p *Process) Err() error {
	<-p.exited
	return p.err
}

// End sends the process its stop signal and waits until it ends, killing it
// after the grace period. A process that has ended is left as it is.
func (p *Process) End() {
	select {
	case <-p.exited:
		return
	default:
	}
	sig, grace := p.stop.Signal, p.stop.Grace
	if sig == nil {
		sig = syscall.SIGTERM
	}
	if grace == 0 {
		grace = 10 * time.Second
	}
	p.signal(sig)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.Kill()
	}
}

// Kill ends the process at once (SIGKILL), as a crash would, and waits
// until it has ended.
func (p *Process) Kill() {
	p.signal(syscall.SIGKILL)
	<-p.exited
}

func (p *Process) signal(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok && p.stop.Group {
		_ = syscall.Kill(-p.Cmd.Process.Pid, s)
		return
	}
	_ = p.Cmd.Process.Signal(sig)
}

// Await calls ready every interval until it reports true. It fails t, with
// what and output's text, when the process exits first or within passes.
func (p *Process) Await(t testing.TB, within, interval time.Duration, ready func() bool, what string, output func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ready() {
		if time.Now().After(deadline) {
			t.Fatalf("%s within %s: %s", what, within, output())
		}
		select { // the process's exit ends the wait early
		case <-p.exited:
			t.Fatalf("%s: the process exited: %v: %s", what, p.err, output())
		case <-time.After(interval):
		}
	}
}
