// Package safebuf is a buffer that several goroutines write and read at
// once: what the servers' tests give a logger, or a process as its output,
// and read while it is still written.
package safebuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent use; the zero value is empty
// and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
