package har

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Writer appends entries to a HAR file as they complete. It is safe for
// concurrent use.
type Writer struct {
	mu      sync.Mutex
	f       *os.File
	entries int
	closed  bool
}

// ErrClosed is the error of a write to a closed Writer.
var ErrClosed = errors.New("har: writer closed")

// Create starts the HAR file path (replacing one there) with log's fields
// but its entries; Append adds each entry and Close ends the document.
func Create(path string, log Log) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("har: %w", err)
	}
	log.Version = Version
	log.Entries = nil
	head, err := json.Marshal(struct {
		Log Log `json:"log"`
	}{log})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("har: %w", err)
	}
	// The log's fields end with "entries":null}}: open the array there
	// instead, so that every entry appended after keeps the file a HAR
	// missing only its closing brackets.
	const tail = `"entries":null}}`
	if !bytes.HasSuffix(head, []byte(tail)) {
		f.Close()
		return nil, errors.New("har: log does not end with its entries")
	}
	head = append(head[:len(head)-len(tail)], `"entries":[`...)
	if _, err := f.Write(head); err != nil {
		f.Close()
		return nil, fmt.Errorf("har: %w", err)
	}
	return &Writer{f: f}, nil
}

// Append writes e at the end of the file in one write, so a process killed
// at any moment leaves every earlier entry whole. The entry is encoded
// before the file is locked, so concurrent Appends encode in parallel.
func (w *Writer) Append(e *Entry) error {
	buf := entryBuffers.Get().(*bytes.Buffer)
	defer func() {
		// A buffer grown by a large entry is left to the collector, so
		// the pool holds no more than small ones.
		if buf.Cap() <= maxPooledEntry {
			entryBuffers.Put(buf)
		}
	}()
	buf.Reset()
	// Each entry but the first follows a comma: written, and skipped for
	// the first.
	buf.WriteString(",\n")
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("har: encode entry: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	data := buf.Bytes()
	if w.entries == 0 {
		data = data[1:]
	}
	// Encode ends with a newline, which the next entry's comma follows.
	if _, err := w.f.Write(data); err != nil {
		return fmt.Errorf("har: write entry: %w", err)
	}
	w.entries++
	return nil
}

// maxPooledEntry is the largest buffer kept for the next entry.
const maxPooledEntry = 1 << 20

var entryBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Entries is how many entries were appended.
func (w *Writer) Entries() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.entries
}

// Close ends the document and closes the file, synced to disk.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	_, err := w.f.WriteString("\n]}}\n")
	if serr := w.f.Sync(); err == nil {
		err = serr
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("har: close: %w", err)
	}
	return nil
}
