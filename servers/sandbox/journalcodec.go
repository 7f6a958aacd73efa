package sandbox

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
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

// entryEncoder encodes the journal writer's rows. Its buffers are kept
// from one commit to the next (a row's encoding is tens or hundreds of
// KiB), so one encoder serves one goroutine: the writer's. The rows of one
// commit are stored together, so each row stays valid until reset.
type entryEncoder struct {
	raw   []byte
	rows  []byte
	names []string
}

// reset starts a commit: the rows encode returned before are no longer
// valid.
func (c *entryEncoder) reset() { c.rows = keep(c.rows)[:0] }

// maxKeptBuffer is the largest buffer an entryEncoder keeps for the next
// row (a rare huge row's is left to the garbage collector).
const maxKeptBuffer = 8 << 20

// encode encodes entries together, their secrets redacted (Record gets
// them as they were sent: apiserver.JournalEntry), and compresses them.
// The row it returns is valid until the next reset.
func (c *entryEncoder) encode(entries []apiserver.JournalEntry) []byte {
	buf := binary.AppendUvarint(c.raw[:0], uint64(len(entries)))
	names := c.names
	for _, e := range entries {
		for _, s := range []string{e.API, e.Operation, e.Method, e.Path, apiserver.RedactQuery(e.Query)} {
			buf = appendString(buf, s)
		}
		buf = binary.AppendVarint(buf, int64(e.Status))
		buf = binary.AppendVarint(buf, e.Time.UnixMicro())
		buf = binary.AppendVarint(buf, e.SetTime.UnixMicro())
		buf = binary.AppendVarint(buf, e.Duration.Microseconds())
		buf, names = appendHeaders(buf, e.RequestHeaders, names)
		buf, names = appendHeaders(buf, e.ResponseHeaders, names)
		buf = appendString(buf, apiserver.RedactBody(e.RequestBody))
		buf = appendString(buf, apiserver.RedactBody(e.ResponseBody))
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
	// The row goes after the rows encoded since reset; when rows grows,
	// their slices keep the array they were made in.
	start := len(c.rows)
	c.rows = zEncoder.EncodeAll(buf, append(c.rows, codecVersion))
	c.raw, c.names = keep(buf), names
	return c.rows[start:len(c.rows):len(c.rows)]
}

// keep is buf to reuse, unless it grew past maxKeptBuffer.
func keep(buf []byte) []byte {
	if cap(buf) > maxKeptBuffer {
		return nil
	}
	return buf
}

func appendString[S string | []byte](buf []byte, s S) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// appendHeaders encodes h, its names sorted (the same headers encode
// alike, which compresses well), the value of every secret header
// (apiserver.SecretHeader) as apiserver.Redacted; names is scratch space,
// returned for the next call.
func appendHeaders(buf []byte, h http.Header, names []string) ([]byte, []string) {
	names = names[:0]
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	buf = binary.AppendUvarint(buf, uint64(len(names)))
	for _, name := range names {
		buf = appendString(buf, name)
		values := h[name]
		if apiserver.SecretHeader(name) {
			values = redacted
		}
		buf = binary.AppendUvarint(buf, uint64(len(values)))
		for _, v := range values {
			buf = appendString(buf, v)
		}
	}
	return buf, names
}

var redacted = []string{apiserver.Redacted}

// errCorrupt: a stored row does not decode.
var errCorrupt = errors.New("corrupt journal row")

// decodeEntries is the reverse of entryEncoder.encode; it also reads the
// rows converted from the per-entry table (convertedVersion).
func decodeEntries(data []byte) ([]apiserver.JournalEntry, error) {
	if len(data) > 0 && data[0] == convertedVersion {
		return decodeConverted(data[1:])
	}
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

// convertedVersion marks a row converted by SQL from one entry of the
// per-entry journal table that journal_batches replaced: the row is that
// byte, then the entry as a JSON object (convertedEntry), uncompressed.
// The table's entries were redacted when stored and had no sandbox time
// (read as the stack's) nor violations.
const convertedVersion = 3

// convertedEntry is a converted row's JSON object: the per-entry table's
// columns, the bodies in hexadecimal (either case), the truncation flags
// as booleans or 0/1 (PostgreSQL's or SQLite's JSON of a boolean column),
// the headers as the table stored them (JSON of an http.Header).
type convertedEntry struct {
	API               string          `json:"api"`
	Operation         string          `json:"operation"`
	Method            string          `json:"method"`
	Path              string          `json:"path"`
	Query             string          `json:"query"`
	Status            int             `json:"status"`
	At                int64           `json:"at"`
	DurationMicros    int64           `json:"duration_micros"`
	RequestHeaders    http.Header     `json:"request_headers"`
	ResponseHeaders   http.Header     `json:"response_headers"`
	RequestBody       string          `json:"request_body"`
	RequestTruncated  json.RawMessage `json:"request_truncated"`
	ResponseBody      string          `json:"response_body"`
	ResponseTruncated json.RawMessage `json:"response_truncated"`
}

// decodeConverted reads a converted row (after its version byte).
func decodeConverted(data []byte) ([]apiserver.JournalEntry, error) {
	var c convertedEntry
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: converted entry: %w", errCorrupt, err)
	}
	reqBody, err1 := hex.DecodeString(c.RequestBody)
	respBody, err2 := hex.DecodeString(c.ResponseBody)
	reqCut, err3 := jsonFlag(c.RequestTruncated)
	respCut, err4 := jsonFlag(c.ResponseTruncated)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, fmt.Errorf("%w: converted entry: %w", errCorrupt, err)
	}
	e := apiserver.JournalEntry{API: c.API, Operation: c.Operation, Method: c.Method, Path: c.Path, Query: c.Query,
		Status: c.Status, Time: sqldb.Time(c.At), SetTime: sqldb.Time(c.At), Duration: time.Duration(c.DurationMicros) * time.Microsecond,
		RequestHeaders: c.RequestHeaders, ResponseHeaders: c.ResponseHeaders, RequestBody: reqBody, ResponseBody: respBody,
		RequestTruncated: reqCut, ResponseTruncated: respCut}
	if e.RequestHeaders == nil {
		e.RequestHeaders = http.Header{}
	}
	if e.ResponseHeaders == nil {
		e.ResponseHeaders = http.Header{}
	}
	return []apiserver.JournalEntry{e}, nil
}

// jsonFlag reads a JSON boolean, or 0 or 1.
func jsonFlag(raw json.RawMessage) (bool, error) {
	switch string(raw) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("flag %s is not a boolean", raw)
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
