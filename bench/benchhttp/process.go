package benchhttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tail keeps the last bytes written to it, a child's output shown when it
// fails, and counts the lines holding each of its markers (a logger writes
// a line in one call).
type tail struct {
	mu      sync.Mutex
	buf     []byte
	markers []string
	counts  map[string]int
}

const tailSize = 16 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.markers {
		if n := countLines(p, m); n > 0 {
			if t.counts == nil {
				t.counts = map[string]int{}
			}
			t.counts[m] += n
		}
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// count returns how many lines held marker.
func (t *tail) count(marker string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[marker]
}

// countLines counts the lines of p holding marker.
func countLines(p []byte, marker string) int {
	n := 0
	for line := range strings.Lines(string(p)) {
		if strings.Contains(line, marker) {
			n++
		}
	}
	return n
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// child is a process the harness started. It runs in its own process group,
// is sent SIGKILL by the kernel if the harness dies, and is stopped by stop.
type child struct {
	name    string
	cmd     *exec.Cmd
	out     *tail
	stdin   io.WriteCloser
	done    chan struct{}
	waitErr error
}

// startChild starts cmd. With announce, the first line the child prints is
// returned (the ceiling's address) and the rest of its output kept in the
// tail. The lines of its output holding a marker are counted.
func startChild(name string, cmd *exec.Cmd, announce bool, markers ...string) (*child, string, error) {
	c := &child{name: name, cmd: cmd, out: &tail{markers: markers}, done: make(chan struct{})}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = c.out
	var stdout io.ReadCloser
	var err error
	if announce {
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return nil, "", fmt.Errorf("%s: %w", name, err)
		}
	} else {
		cmd.Stdout = c.out
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("starting %s: %w", name, err)
	}
	var line string
	if announce {
		r := bufio.NewReader(stdout)
		line, err = r.ReadString('\n')
		go func() { _, _ = io.Copy(c.out, r) }()
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, "", fmt.Errorf("%s did not announce its address: %w; output:\n%s", name, err, c.out)
		}
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	return c, strings.TrimSpace(line), nil
}

// pid returns the process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// failure describes how the child ended, with its last output.
func (c *child) failure() error {
	return fmt.Errorf("%s exited (%v); its last output:\n%s", c.name, c.waitErr, c.out)
}

// stop asks the child's process group to end (SIGTERM, and closes its
// standard input), and kills it after grace.
func (c *child) stop(grace time.Duration) {
	if c.exited() {
		return
	}
	_ = c.stdin.Close()
	_ = syscall.Kill(-c.pid(), syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
		<-c.done
	}
}

// rssBytes reads the process's resident set size (VmRSS) from /proc.
func rssBytes(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	return parseVmRSS(string(data))
}

// parseVmRSS finds the VmRSS line of a /proc/PID/status text.
func parseVmRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmRSS line %q", strings.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS %q: %w", f[0], err)
		}
		return kb << 10, nil
	}
	return 0, errors.New("no VmRSS line")
}

// waitHTTP polls url until it answers any HTTP status, the child exits, or
// timeout passes.
func waitHTTP(ctx context.Context, c *child, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return nil
		}
		if c != nil && c.exited() {
			return c.failure()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %s: %w", url, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
