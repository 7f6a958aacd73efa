package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/validation"
)

// The journal stores the entries of one sandbox that one commit of its
// writer holds in one row: encoded one after the other (the format below),
// then zstd-compressed. One row and one compressed blob per commit costs a
// small part of what a row per entry did (BenchmarkJournalCost); a read
// decodes the rows of its sandbox.
//
// The format (version 2): a uvarint count of entries, then each entry as
// its strings (API, operation, method, path, query), status, arrival
// (Unix microseconds) on the stack's clock and on the sandbox's, duration
// (microseconds), request and response
// headers, request body, response body, the two truncation flags and the
// spec violations. A string or a body is a uvarint length and its bytes;
// headers are a uvarint count of names, each name followed by a uvarint
// count of values; a violation is three strings (in, name, rule). Version 1
// (still read) had no arrival on the sandbox's clock: it reads as the
// stack's.
const codecVersion = 2

// seqShift makes an entry's seq: its row's id shifted left by seqShift,
// plus its place in the row (a row holds at most maxBatch entries).
const seqShift = 10

var (
	zEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true))
	zDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20))
)

// encodeEntries encodes entries together and compresses them.
func encodeEntries(entries []apiserver.JournalEntry) []byte {
	scratch := encodeBuffers.Get().(*[]byte)
	defer func() {
		if cap(*scratch) <= 1<<20 { // a rare huge batch's is not kept
			encodeBuffers.Put(scratch)
		}
	}()
	buf := binary.AppendUvarint((*scratch)[:0], uint64(len(entries)))
	var names []string
	for _, e := range entries {
		for _, s := range []string{e.API, e.Operation, e.Method, e.Path, e.Query} {
			buf = appendString(buf, s)
		}
		buf = binary.AppendVarint(buf, int64(e.Status))
		buf = binary.AppendVarint(buf, e.Time.UnixMicro())
		buf = binary.AppendVarint(buf, e.SetTime.UnixMicro())
		buf = binary.AppendVarint(buf, e.Duration.Microseconds())
		buf, names = appendHeaders(buf, e.RequestHeaders, names)
		buf, names = appendHeaders(buf, e.ResponseHeaders, names)
		buf = appendString(buf, e.RequestBody)
		buf = appendString(buf, e.ResponseBody)
		var flags byte
		if e.RequestTruncated {
			flags |= 1
		}
		if e.ResponseTruncated {
			flags |= 2
		}
		buf = append(buf, flags)
		buf = binary.AppendUvarint(buf, uint64(len(e.Violations)))
		for _, v := range e.Violations {
			buf = appendString(buf, v.In)
			buf = appendString(buf, v.Name)
			buf = appendString(buf, v.Message)
		}
	}
	*scratch = buf
	// The compressed row is the caller's (the database driver's); the
	// uncompressed encoding goes back to the pool.
	row := make([]byte, 1, 64+len(buf)/4)
	row[0] = codecVersion
	return zEncoder.EncodeAll(buf, row)
}

// encodeBuffers keep encodeEntries' uncompressed encodings between
// commits (a commit's is tens of KiB).
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func appendString[S string | []byte](buf []byte, s S) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// appendHeaders encodes h, its names sorted (the same headers encode
// alike, which compresses well); names is scratch space, returned for the
// next call.
func appendHeaders(buf []byte, h http.Header, names []string) ([]byte, []string) {
	names = names[:0]
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	buf = binary.AppendUvarint(buf, uint64(len(names)))
	for _, name := range names {
		buf = appendString(buf, name)
		buf = binary.AppendUvarint(buf, uint64(len(h[name])))
		for _, v := range h[name] {
			buf = appendString(buf, v)
		}
	}
	return buf, names
}

// errCorrupt: a stored row does not decode.
var errCorrupt = errors.New("corrupt journal row")

// decodeEntries is the reverse of encodeEntries.
func decodeEntries(data []byte) ([]apiserver.JournalEntry, error) {
	if len(data) == 0 || (data[0] != codecVersion && data[0] != 1) {
		return nil, fmt.Errorf("%w: unknown encoding", errCorrupt)
	}
	version := data[0]
	raw, err := zDecoder.DecodeAll(data[1:], nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	d := decoder{buf: raw}
	n := d.uvarint()
	if n > maxBatch {
		return nil, fmt.Errorf("%w: %d entries", errCorrupt, n)
	}
	out := make([]apiserver.JournalEntry, 0, n)
	for range n {
		var e apiserver.JournalEntry
		e.API, e.Operation, e.Method, e.Path, e.Query = d.string(), d.string(), d.string(), d.string(), d.string()
		e.Status = int(d.varint())
		e.Time = sqldb.Time(d.varint())
		e.SetTime = e.Time
		if version >= 2 {
			e.SetTime = sqldb.Time(d.varint())
		}
		e.Duration = time.Duration(d.varint()) * time.Microsecond
		e.RequestHeaders, e.ResponseHeaders = d.headers(), d.headers()
		e.RequestBody, e.ResponseBody = []byte(d.string()), []byte(d.string())
		flags := d.byte()
		e.RequestTruncated, e.ResponseTruncated = flags&1 != 0, flags&2 != 0
		nv := d.uvarint()
		for i := uint64(0); i < nv && d.err == nil; i++ {
			e.Violations = append(e.Violations, validation.Cause{In: d.string(), Name: d.string(), Message: d.string()})
		}
		if d.err != nil {
			return nil, d.err
		}
		out = append(out, e)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.err = fmt.Errorf("%w: %d bytes left over", errCorrupt, len(d.buf))
	}
	return out, d.err
}

// decoder reads the format; its first error sticks.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated", errCorrupt)
	}
	d.buf = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.buf) == 0 {
		d.fail()
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.buf)) {
		d.fail()
		return ""
	}
	s := string(d.buf[:n])
	d.buf = d.buf[n:]
	return s
}

func (d *decoder) headers() http.Header {
	n := d.uvarint()
	h := make(http.Header, min(n, 64))
	for i := uint64(0); i < n && d.err == nil; i++ {
		name := d.string()
		nv := d.uvarint()
		values := make([]string, 0, min(nv, 16))
		for j := uint64(0); j < nv && d.err == nil; j++ {
			values = append(values, d.string())
		}
		h[name] = values
	}
	return h
}
