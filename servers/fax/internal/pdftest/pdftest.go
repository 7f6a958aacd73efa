// Package pdftest builds PDF documents for tests: a plain one of n empty
// pages, and a "PDF bomb" whose pages live in object streams that each
// inflate to a chosen size from a small deflate stream.
package pdftest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/adler32"
)

// Bomb returns a valid PDF of pages pages. Each page object is stored in its
// own object stream (found through a cross-reference stream), followed by
// padding spaces, so that the object stream inflates to about inflated
// bytes from about inflated/160 bytes of deflate data.
func Bomb(pages int, inflated int64) []byte {
	var b bytes.Buffer
	offsets := map[int]int{}
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	obj := func(n int, body string, stream []byte) {
		offsets[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s", n, body)
		if stream != nil {
			b.WriteString("\nstream\n")
			b.Write(stream)
			b.WriteString("\nendstream")
		}
		b.WriteString("\nendobj\n")
	}
	// Objects: 1 catalog, 2 pages, 3..3+pages-1 the pages (compressed),
	// then one object stream per page, then the cross-reference stream.
	firstPage, firstStm := 3, 3+pages
	xrefNr := firstStm + pages
	var kids bytes.Buffer
	for i := range pages {
		fmt.Fprintf(&kids, "%d 0 R ", firstPage+i)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>", nil)
	obj(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), pages), nil)
	for i := range pages {
		prolog := fmt.Sprintf("%d 0 ", firstPage+i)
		page := "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> >>"
		data := spacesAfter([]byte(prolog+page), inflated-int64(len(prolog)+len(page)))
		obj(firstStm+i, fmt.Sprintf("<< /Type /ObjStm /N 1 /First %d /Filter /FlateDecode /Length %d >>", len(prolog), len(data)), data)
	}
	// The cross-reference stream: W [1 4 2].
	var xref bytes.Buffer
	entry := func(typ byte, f2 uint32, f3 uint16) {
		xref.WriteByte(typ)
		_ = binary.Write(&xref, binary.BigEndian, f2)
		_ = binary.Write(&xref, binary.BigEndian, f3)
	}
	offsets[xrefNr] = b.Len()
	entry(0, 0, 65535)
	entry(1, uint32(offsets[1]), 0)
	entry(1, uint32(offsets[2]), 0)
	for i := range pages {
		entry(2, uint32(firstStm+i), 0)
	}
	for i := range pages {
		entry(1, uint32(offsets[firstStm+i]), 0)
	}
	entry(1, uint32(offsets[xrefNr]), 0)
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", xrefNr, xrefNr+1, xref.Len())
	b.Write(xref.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", offsets[xrefNr])
	return b.Bytes()
}

// spacesAfter returns zlib data that inflates to prefix followed by about n
// spaces (rounded up to a whole number of 258-byte copies). The spaces are
// written directly as fixed-Huffman "copy 258 bytes from distance 1" codes,
// 13 bits each, so building a gigabyte costs milliseconds.
func spacesAfter(prefix []byte, n int64) []byte {
	var out bytes.Buffer
	out.Write([]byte{0x78, 0x01}) // zlib header: deflate, 32K window
	// A stored block for the prefix.
	out.WriteByte(0x00) // BFINAL=0, BTYPE=00, padding
	_ = binary.Write(&out, binary.LittleEndian, uint16(len(prefix)))
	_ = binary.Write(&out, binary.LittleEndian, ^uint16(len(prefix)))
	out.Write(prefix)
	// A final fixed-Huffman block: one literal space, then copies.
	w := bitWriter{out: &out}
	w.bits(0b011, 3) // BFINAL=1, BTYPE=01
	w.code(0x50, 8)  // literal ' ' (0x30 + 0x20)
	copies := max((n-1+257)/258, 0)
	for range copies {
		w.code(0xC5, 8) // length symbol 285: 258 bytes
		w.code(0, 5)    // distance symbol 0: distance 1
	}
	w.code(0, 7) // end of block (256)
	w.flush()
	spaces := 1 + 258*copies
	h := adler32.New()
	h.Write(prefix)
	sum := extendAdler(h.Sum32(), ' ', spaces)
	_ = binary.Write(&out, binary.BigEndian, sum)
	return out.Bytes()
}

// extendAdler returns the Adler-32 of the data summed so far followed by n
// copies of c.
func extendAdler(sum uint32, c byte, n int64) uint32 {
	const mod = 65521
	a, b := uint64(sum&0xffff), uint64(sum>>16)
	nm := uint64(n % mod)
	// b grows by n*a + c*(1+2+...+n).
	tri := uint64(n) % (2 * mod) * ((uint64(n) + 1) % (2 * mod)) / 2 % mod
	b = (b + nm*a + uint64(c)*tri) % mod
	a = (a + uint64(c)*nm) % mod
	return uint32(b<<16 | a)
}

// bitWriter writes deflate's LSB-first bit stream.
type bitWriter struct {
	out  *bytes.Buffer
	acc  uint64
	nacc uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.out.WriteByte(byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// code writes a Huffman code, whose bits go most significant first.
func (w *bitWriter) code(c uint64, n uint) {
	var r uint64
	for i := range n {
		r |= (c >> i & 1) << (n - 1 - i)
	}
	w.bits(r, n)
}

func (w *bitWriter) flush() {
	if w.nacc > 0 {
		w.out.WriteByte(byte(w.acc))
		w.acc, w.nacc = 0, 0
	}
}
