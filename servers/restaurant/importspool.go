package restaurant

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// importSpool holds the checked entities of an import between its two
// passes: the first reads the document from its client and checks it, with
// no transaction open, and the second writes what the first spooled inside
// the import's transaction. A client that sends its document slowly thus
// never holds the database's writer (on SQLite, every other write waits for
// it). A spool of a document read from a stream is a temporary file, so
// that the import's memory does not follow the document's size; one of a
// document already held in memory stays in memory.
//
// Each entity is one record: its kind, GUID, external ID (a flag and the
// value), pointer and document, then the count of its references and, for
// each, its kind, GUID and pointer; every string is a uvarint length
// followed by its bytes.
type importSpool struct {
	file *os.File // nil: the records are in mem
	mem  bytes.Buffer
	w    *bufio.Writer
	rec  []byte
}

// newImportSpool returns an empty spool, a temporary file when onDisk.
func newImportSpool(onDisk bool) (*importSpool, error) {
	s := &importSpool{}
	if !onDisk {
		s.w = bufio.NewWriterSize(&s.mem, 4096)
		return s, nil
	}
	f, err := os.CreateTemp("", "apistack-restaurant-import-*")
	if err != nil {
		return nil, fmt.Errorf("spool the import: %w", err)
	}
	s.file, s.w = f, bufio.NewWriterSize(f, 64<<10)
	return s, nil
}

// put appends one entity.
func (s *importSpool) put(e *storedEntity) error {
	b := s.rec[:0]
	b = appendField(b, e.Kind)
	b = appendField(b, e.GUID)
	if e.ExternalID != nil {
		b = append(b, 1)
		b = appendField(b, *e.ExternalID)
	} else {
		b = append(b, 0)
	}
	b = appendField(b, e.At)
	b = binary.AppendUvarint(b, uint64(len(e.Doc)))
	b = append(b, e.Doc...)
	b = binary.AppendUvarint(b, uint64(len(e.Refs)))
	for _, r := range e.Refs {
		b = appendField(b, r.Kind)
		b = appendField(b, r.GUID)
		b = appendField(b, r.At)
	}
	s.rec = b
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("spool the import: %w", err)
	}
	return nil
}

func appendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// reader flushes the spool and returns a reader of its records from the
// first.
func (s *importSpool) reader() (*spoolReader, error) {
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("spool the import: %w", err)
	}
	if s.file == nil {
		return &spoolReader{r: bufio.NewReader(bytes.NewReader(s.mem.Bytes()))}, nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read the import's spool: %w", err)
	}
	return &spoolReader{r: bufio.NewReaderSize(s.file, 64<<10)}, nil
}

// close removes the spool's file.
func (s *importSpool) close() {
	if s.file != nil {
		_ = s.file.Close()
		_ = os.Remove(s.file.Name())
	}
}

// spoolReader reads an importSpool's records.
type spoolReader struct {
	r   *bufio.Reader
	err error
}

// next reads the next entity into e (its slices reused); false at the end
// or on an error (err).
func (sr *spoolReader) next(e *storedEntity) bool {
	if _, err := sr.r.Peek(1); err != nil {
		if !errors.Is(err, io.EOF) {
			sr.err = fmt.Errorf("read the import's spool: %w", err)
		}
		return false
	}
	e.Kind = sr.field()
	e.GUID = sr.field()
	e.ExternalID = nil
	if flag, err := sr.r.ReadByte(); err != nil {
		sr.fail(err)
	} else if flag == 1 {
		ext := sr.field()
		e.ExternalID = &ext
	}
	e.At = sr.field()
	e.Doc = sr.bytes(e.Doc[:0])
	n := sr.uvarint()
	e.Refs = e.Refs[:0]
	for i := uint64(0); i < n && sr.err == nil; i++ {
		e.Refs = append(e.Refs, storedRef{Kind: sr.field(), GUID: sr.field(), At: sr.field()})
	}
	return sr.err == nil
}

func (sr *spoolReader) fail(err error) {
	if sr.err == nil {
		sr.err = fmt.Errorf("read the import's spool: %w", err)
	}
}

func (sr *spoolReader) uvarint() uint64 {
	if sr.err != nil {
		return 0
	}
	n, err := binary.ReadUvarint(sr.r)
	if err != nil {
		sr.fail(err)
	}
	return n
}

func (sr *spoolReader) bytes(into []byte) []byte {
	n := sr.uvarint()
	if sr.err != nil {
		return into
	}
	start := len(into)
	into = slices.Grow(into, int(n))[:start+int(n)]
	if _, err := io.ReadFull(sr.r, into[start:]); err != nil {
		sr.fail(err)
	}
	return into
}

func (sr *spoolReader) field() string {
	return string(sr.bytes(nil))
}
