// Package pdflimit bounds the work of reading an untrusted PDF before a PDF
// library reads it.
//
// A PDF library's per-stream decode limit is not a per-document cap: a small
// file can hold many streams that each inflate to hundreds of megabytes (a
// "PDF bomb"). Check decodes every stream of a document through one shared
// budget of decoded bytes, counts its objects and honours a context, so a
// document that passes costs at most the budget to decode, whoever decodes
// it afterwards. It fails closed: what it cannot account for (an encrypted
// document, a stream dictionary it cannot parse, an indirect /Filter) is
// refused.
package pdflimit

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Limits are the bounds of one document.
type Limits struct {
	// MaxDecodedBytes caps the bytes produced by decoding every stream of
	// the document, every filter stage counted.
	MaxDecodedBytes int64
	// MaxObjects caps the indirect objects: those in the file and those
	// object streams declare.
	MaxObjects int
	// MaxRowBytes caps one row of a predictor's DecodeParms (Columns x
	// Colors x BitsPerComponent / 8), which a decoder allocates up front.
	MaxRowBytes int
}

// ErrLimit is wrapped by Check's error when the document exceeds a limit.
var ErrLimit = errors.New("the document exceeds a limit")

// ErrUnsupported is wrapped by Check's error when the document cannot be
// accounted for (encrypted, or a stream it cannot decode).
var ErrUnsupported = errors.New("the document cannot be checked")

// Check scans doc and returns an error wrapping ErrLimit or ErrUnsupported
// when reading it would exceed l or cannot be bounded, or ctx's error when
// ctx ends first. It keeps at most l.MaxDecodedBytes of decoded data in
// memory at once.
//
// The scan itself is linear in the size of doc plus the budget: every
// stream's data is read once (data read again, as overlapping streams
// would, counts against a reading budget of len(doc) plus the decode
// budget), and a header serves one stream.
func Check(ctx context.Context, doc []byte, l Limits) error {
	c := checker{ctx: ctx, doc: doc, limits: l, budget: l.MaxDecodedBytes, reading: int64(len(doc)) + l.MaxDecodedBytes, lastHeader: -1}
	if err := c.countObjects(); err != nil {
		return err
	}
	if err := c.xrefTables(); err != nil {
		return err
	}
	if err := c.trailers(); err != nil {
		return err
	}
	return c.streams()
}

type checker struct {
	ctx     context.Context
	doc     []byte
	limits  Limits
	budget  int64 // decoded bytes left
	reading int64 // encoded bytes left to read
	objects int
	// headers are the offsets of the "obj" keywords of the object
	// headers, ascending; lastHeader is the last one a stream used.
	headers    []int
	lastHeader int
}

// maxTrailers bounds the trailers parsed (one per incremental update).
const maxTrailers = 256

// countObjects counts the "N G obj" headers of the file.
func (c *checker) countObjects() error {
	for i := 0; ; {
		at, ok := c.next(i, "obj", "")
		if !ok {
			return nil
		}
		i = at + len("obj")
		if _, ok := objectHeaderStart(c.doc, at); !ok {
			continue
		}
		c.headers = append(c.headers, at)
		c.objects++
		if err := c.counted(c.objects, "more than %d objects"); err != nil {
			return err
		}
	}
}

// next returns the offset of the first keyword kw at or after i that does
// not directly follow notAfter ("" for none: "xref" of "startxref",
// "stream" of "endstream"), and whether there is one.
func (c *checker) next(i int, kw, notAfter string) (int, bool) {
	for {
		j := bytes.Index(c.doc[i:], []byte(kw))
		if j < 0 {
			return 0, false
		}
		at := i + j
		if notAfter == "" || at < len(notAfter) || string(c.doc[at-len(notAfter):at]) != notAfter {
			return at, true
		}
		i = at + len(kw)
	}
}

// counted checks the n-th thing counted against the object limit (tooMany
// says what is too many, with a %d for the limit) and, every 4096, that
// the context is still live.
func (c *checker) counted(n int, tooMany string) error {
	if n > c.limits.MaxObjects {
		return fmt.Errorf("%s: %w", fmt.Sprintf(tooMany, c.limits.MaxObjects), ErrLimit)
	}
	if n%4096 == 0 {
		return c.ctx.Err()
	}
	return nil
}

// xrefTables counts the entries of the classic cross-reference tables: the
// library keeps one for each line it reads, whatever a subsection declares.
func (c *checker) xrefTables() error {
	entries := 0
	for i := 0; ; {
		at, ok := c.next(i, "xref", "start")
		if !ok {
			return nil
		}
		i = at + len("xref")
		for rest := c.doc[i:]; len(rest) > 0; i = len(c.doc) - len(rest) {
			line := rest
			if k := bytes.IndexAny(rest, "\r\n"); k >= 0 {
				line, rest = rest[:k], rest[k+1:]
			} else {
				rest = nil
			}
			fields := bytes.Fields(line)
			if len(fields) == 0 || len(fields) == 2 {
				continue // a blank line or a subsection header
			}
			if len(fields) != 3 {
				break // the trailer, or the end of the table
			}
			entries++
			if err := c.counted(entries, "cross-reference tables of more than %d entries"); err != nil {
				return err
			}
		}
	}
}

// trailers refuses an encrypted document: its streams cannot be decoded
// here, so their size cannot be bounded.
func (c *checker) trailers() error {
	parsed := 0
	for i := 0; ; {
		at, ok := c.next(i, "trailer", "")
		if !ok {
			return nil
		}
		i = at + len("trailer")
		k := i
		for k < len(c.doc) && isSpace(c.doc[k]) {
			k++
		}
		if !bytes.HasPrefix(c.doc[k:], []byte("<<")) {
			continue
		}
		if parsed++; parsed > maxTrailers {
			return fmt.Errorf("more than %d trailers: %w", maxTrailers, ErrLimit)
		}
		rest := string(c.doc[k:min(len(c.doc), k+16<<10)])
		o, err := model.ParseObject(&rest)
		if err != nil {
			return fmt.Errorf("a trailer cannot be parsed: %w", ErrUnsupported)
		}
		if d, ok := o.(types.Dict); ok {
			if _, enc := d.Find("Encrypt"); enc {
				return fmt.Errorf("the document is encrypted: %w", ErrUnsupported)
			}
		}
	}
}

// streams decodes every stream of the file within the budget.
func (c *checker) streams() error {
	for i := 0; ; {
		at, ok := c.next(i, "stream", "end")
		if !ok {
			return nil
		}
		i = at + len("stream")
		dictEnd, ok := afterDictEnd(c.doc, at)
		if !ok {
			continue // not a stream keyword: no dictionary right before it
		}
		if err := c.ctx.Err(); err != nil {
			return err
		}
		d, err := c.streamDict(dictEnd)
		if err != nil {
			return err
		}
		if err := c.stream(d, dataStart(c.doc, i)); err != nil {
			return err
		}
	}
}

// streamDict parses the dictionary that ends at dictEnd, starting after the
// nearest "N G obj" header before it.
func (c *checker) streamDict(dictEnd int) (types.Dict, error) {
	h := sort.SearchInts(c.headers, dictEnd) - 1
	if h < 0 {
		return nil, fmt.Errorf("a stream has no object header: %w", ErrUnsupported)
	}
	if h == c.lastHeader {
		return nil, fmt.Errorf("two streams in one object: %w", ErrUnsupported)
	}
	c.lastHeader = h
	start := c.headers[h] + len("obj")
	text := string(c.doc[start:dictEnd])
	o, err := model.ParseObject(&text)
	if err != nil {
		return nil, fmt.Errorf("a stream dictionary cannot be parsed: %w", ErrUnsupported)
	}
	d, ok := o.(types.Dict)
	if !ok {
		return nil, fmt.Errorf("a stream has no dictionary: %w", ErrUnsupported)
	}
	if _, enc := d.Find("Encrypt"); enc {
		return nil, fmt.Errorf("the document is encrypted: %w", ErrUnsupported)
	}
	return d, nil
}

// stream decodes the data at doc[start:] with d's filters. The data is
// taken to the end of the file, not to /Length: a decoder stops at the end
// of its encoding, and decoding more than a reader that trusts /Length
// decodes only ever counts more.
func (c *checker) stream(d types.Dict, start int) error {
	if t, ok := d.Find("Type"); ok {
		if n, ok := t.(types.Name); ok && n.Value() == "ObjStm" {
			if count, ok := d.Find("N"); ok {
				if v, ok := count.(types.Integer); ok {
					c.objects += max(v.Value(), 0)
					if c.objects > c.limits.MaxObjects {
						return fmt.Errorf("more than %d objects: %w", c.limits.MaxObjects, ErrLimit)
					}
				}
			}
		}
	}
	if st, ok := d.Find("Subtype"); ok {
		if n, ok := st.(types.Name); ok && n.Value() == "Image" {
			// Image data: counting pages never decodes it (a scanned page
			// is often a Flate image), and an image cannot pass for the
			// one other stream the library decodes, the catalog's XML
			// metadata.
			return nil
		}
	}
	names, parms, err := pipeline(d)
	if err != nil {
		return err
	}
	// Flate stages stream into the next one; the library's other decoders
	// materialise their output, which the budget bounds.
	var r io.Reader = &source{c: c, r: bytes.NewReader(c.doc[start:])}
stages:
	for k, name := range names {
		if err := c.checkRow(parms[k]); err != nil {
			return err
		}
		switch name {
		case filter.DCT, filter.JPX, filter.JBIG2, filter.CCITTFax:
			// Image data is kept encoded: counting pages never decodes it.
			break stages
		case filter.Flate:
			zr, err := zlib.NewReader(r)
			if err != nil {
				return nil // nothing decodes, here or in the library
			}
			r = &counted{c: c, r: zr}
		case filter.LZW, filter.RunLength, filter.ASCIIHex, filter.ASCII85:
			out, err := c.decode(name, parms[k], r)
			if err != nil {
				return err
			}
			r = bytes.NewReader(out)
		default:
			// An unknown filter: the PDF library refuses to decode it too.
			break stages
		}
	}
	_, err = io.Copy(io.Discard, r)
	return err
}

// counted charges what r produces to the budget. A decoding error ends the
// data, as the PDF library keeps what precedes it.
type counted struct {
	c *checker
	r io.Reader
}

func (cr *counted) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	if serr := cr.c.spend(int64(n)); serr != nil {
		return n, serr
	}
	if err != nil && err != io.EOF {
		if errors.Is(err, ErrLimit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return n, err
		}
		return n, io.EOF
	}
	if cr.c.ctx.Err() != nil {
		return n, cr.c.ctx.Err()
	}
	return n, err
}

// source charges the encoded bytes read to the reading budget.
type source struct {
	c *checker
	r *bytes.Reader
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.c.reading -= int64(n)
	if s.c.reading < 0 {
		return n, fmt.Errorf("streams read more than once: %w", ErrLimit)
	}
	return n, err
}

// ReadByte lets a decompressor read exactly what it consumes, without a
// buffer reading ahead.
func (s *source) ReadByte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		if s.c.reading--; s.c.reading < 0 {
			return b, fmt.Errorf("streams read more than once: %w", ErrLimit)
		}
	}
	return b, err
}

// decode runs one of the PDF library's decoders within the budget. An
// error refuses the document: a decoder's partial output is not returned,
// so it cannot be counted.
func (c *checker) decode(name string, parms map[string]int, r io.Reader) ([]byte, error) {
	if c.budget <= 0 {
		return nil, c.spend(1)
	}
	f, err := filter.NewFilter(name, parms, c.budget)
	if err != nil {
		return nil, fmt.Errorf("filter %s: %w", name, ErrUnsupported)
	}
	dr, err := f.Decode(r)
	if errors.Is(err, filter.ErrDecodeLimitExceeded) {
		return nil, c.spend(c.budget + 1)
	}
	if errors.Is(err, ErrLimit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("a %s stream cannot be decoded: %w", name, ErrUnsupported)
	}
	out, err := io.ReadAll(dr)
	if err != nil {
		return nil, fmt.Errorf("a %s stream cannot be decoded: %w", name, ErrUnsupported)
	}
	return out, c.spend(int64(len(out)))
}

func (c *checker) spend(n int64) error {
	c.budget -= n
	if c.budget < 0 {
		return fmt.Errorf("streams decode to more than %d bytes: %w", c.limits.MaxDecodedBytes, ErrLimit)
	}
	return nil
}

// checkRow refuses predictor parameters whose row a decoder would allocate
// beyond MaxRowBytes.
func (c *checker) checkRow(parms map[string]int) error {
	if parms == nil {
		return nil
	}
	cols, colors, bpc := int64(parms["Columns"]), int64(parms["Colors"]), int64(parms["BitsPerComponent"])
	if cols < 0 || colors < 0 || bpc < 0 || cols > 1<<24 || colors > 1<<8 || bpc > 1<<8 {
		return fmt.Errorf("DecodeParms out of range: %w", ErrLimit)
	}
	if cols*max(colors, 1)*max(bpc, 8)/8 > int64(c.limits.MaxRowBytes) {
		return fmt.Errorf("a predictor row over %d bytes: %w", c.limits.MaxRowBytes, ErrLimit)
	}
	return nil
}

// filterAliases are the abbreviations the PDF library accepts in relaxed
// mode.
var filterAliases = map[string]string{
	"AHx": filter.ASCIIHex, "A85": filter.ASCII85, "LZW": filter.LZW, "Fl": filter.Flate,
	"RL": filter.RunLength, "CCF": filter.CCITTFax, "DCT": filter.DCT,
}

// pipeline returns d's filters and their integer decode parameters. An
// indirect /Filter or /DecodeParms cannot be followed here and is refused.
func pipeline(d types.Dict) ([]string, []map[string]int, error) {
	fo, ok := d.Find("Filter")
	if !ok || fo == nil {
		return nil, nil, nil
	}
	var filters types.Array
	switch f := fo.(type) {
	case types.Name:
		filters = types.Array{f}
	case types.Array:
		filters = f
	default:
		return nil, nil, fmt.Errorf("an indirect or malformed /Filter: %w", ErrUnsupported)
	}
	var parmsList types.Array
	if po, ok := d.Find("DecodeParms"); ok && po != nil {
		switch p := po.(type) {
		case types.Dict:
			parmsList = types.Array{p}
		case types.Array:
			parmsList = p
		default:
			return nil, nil, fmt.Errorf("an indirect or malformed /DecodeParms: %w", ErrUnsupported)
		}
	}
	names := make([]string, 0, len(filters))
	parms := make([]map[string]int, len(filters))
	for k, o := range filters {
		n, ok := o.(types.Name)
		if !ok {
			return nil, nil, fmt.Errorf("an indirect or malformed /Filter: %w", ErrUnsupported)
		}
		name, err := types.DecodeName(n.Value())
		if err != nil {
			return nil, nil, fmt.Errorf("a malformed filter name: %w", ErrUnsupported)
		}
		if canonical, ok := filterAliases[name]; ok {
			name = canonical
		}
		names = append(names, name)
		if k < len(parmsList) && parmsList[k] != nil {
			pd, ok := parmsList[k].(types.Dict)
			if !ok {
				return nil, nil, fmt.Errorf("an indirect or malformed /DecodeParms: %w", ErrUnsupported)
			}
			parms[k] = intParms(pd)
		}
	}
	return names, parms, nil
}

// intParms keeps the parameters that change how much a decoder produces or
// allocates; predictors only reshape rows, so they are left out of the
// decoding here and bounded by checkRow.
func intParms(d types.Dict) map[string]int {
	out := map[string]int{}
	for _, k := range []string{"EarlyChange", "Columns", "Colors", "BitsPerComponent"} {
		if v, ok := d.Find(k); ok {
			if i, ok := v.(types.Integer); ok {
				out[k] = i.Value()
			}
		}
	}
	return out
}

// objectHeaderStart reports whether the "obj" at doc[at:] ends an object
// header "N G obj", and where the header starts.
func objectHeaderStart(doc []byte, at int) (int, bool) {
	if end := at + 3; end < len(doc) && !isDelimiterOrSpace(doc[end]) {
		return 0, false
	}
	k := at
	k = skipSpaceBack(doc, k)
	if k == at {
		return 0, false
	}
	k, ok := digitsBack(doc, k) // generation
	if !ok {
		return 0, false
	}
	k2 := skipSpaceBack(doc, k)
	if k2 == k {
		return 0, false
	}
	k, ok = digitsBack(doc, k2) // number
	if !ok {
		return 0, false
	}
	if k > 0 && !isDelimiterOrSpace(doc[k-1]) {
		return 0, false
	}
	return k, true
}

// afterDictEnd reports whether only white space separates the "stream"
// keyword at doc[at:] from a preceding ">>", and returns the end of that
// ">>".
func afterDictEnd(doc []byte, at int) (int, bool) {
	k := skipSpaceBack(doc, at)
	if k >= 2 && doc[k-1] == '>' && doc[k-2] == '>' {
		return k, true
	}
	return 0, false
}

// dataStart is where a stream's data starts: after the end of line that
// follows the keyword.
func dataStart(doc []byte, i int) int {
	switch {
	case i+1 < len(doc) && doc[i] == '\r' && doc[i+1] == '\n':
		return i + 2
	case i < len(doc) && (doc[i] == '\n' || doc[i] == '\r'):
		return i + 1
	}
	return i
}

func skipSpaceBack(doc []byte, k int) int {
	for k > 0 && isSpace(doc[k-1]) {
		k--
	}
	return k
}

func digitsBack(doc []byte, k int) (int, bool) {
	start := k
	for k > 0 && doc[k-1] >= '0' && doc[k-1] <= '9' {
		k--
	}
	return k, k < start && start-k <= 10
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == '\f' || b == 0
}

func isDelimiterOrSpace(b byte) bool {
	switch b {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return isSpace(b)
}
