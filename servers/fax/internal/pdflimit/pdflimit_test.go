package pdflimit_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/servers/fax/internal/pdflimit"
	"github.com/apistack/apistack/servers/fax/internal/pdftest"
)

var limits = pdflimit.Limits{MaxDecodedBytes: 4 << 20, MaxObjects: 1000, MaxRowBytes: 1 << 20}

// withStream returns a one-object document around a stream of dict and data.
func withStream(dict string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n1 0 obj\n" + dict + "\nstream\n")
	b.Write(data)
	b.WriteString("\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
	return b.Bytes()
}

func deflate(data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	_, _ = w.Write(data)
	_ = w.Close()
	return b.Bytes()
}

func TestCheck(t *testing.T) {
	spaces := deflate(bytes.Repeat([]byte{' '}, 5<<20))
	twoStage := deflate(deflate(bytes.Repeat([]byte{' '}, 5<<20)))
	tests := []struct {
		name string
		doc  []byte
		want error
	}{
		{"a bomb of object streams", pdftest.Bomb(3, 100<<20), pdflimit.ErrLimit},
		{"object streams within the budget", pdftest.Bomb(3, 1<<20), nil},
		{"many streams within the budget each, over it together", manyStreams(40, 128<<10), pdflimit.ErrLimit},
		{"a deflate inside a deflate", withStream("<< /Filter [/FlateDecode /FlateDecode] >>", twoStage), pdflimit.ErrLimit},
		{"an abbreviated filter name", withStream("<< /Filter /Fl >>", spaces), pdflimit.ErrLimit},
		{"an escaped filter name", withStream("<< /Filter /Fl#61teDecode >>", spaces), pdflimit.ErrLimit},
		{"a /Length that hides most of the data", withStream("<< /Filter /FlateDecode /Length 10 >>", spaces), pdflimit.ErrLimit},
		{"an indirect filter", withStream("<< /Filter 9 0 R >>", []byte("x")), pdflimit.ErrUnsupported},
		{"a huge predictor row", withStream("<< /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 16000000 /Colors 4 >> >>", deflate([]byte("x"))), pdflimit.ErrLimit},
		{"an encrypted document", []byte("%PDF-1.7\ntrailer\n<< /Root 1 0 R /Encrypt 5 0 R >>\n%%EOF\n"), pdflimit.ErrUnsupported},
		{"too many objects", manyStreams(1001, 1), pdflimit.ErrLimit},
		{"a cross-reference table of too many entries", xrefTable(1001), pdflimit.ErrLimit},
		{"a cross-reference table within the limit", xrefTable(1000), nil},
		{"two streams in one object", []byte("%PDF-1.7\n1 0 obj\n<< >>\nstream\nx\nendstream\n<< >>\nstream\ny\nendstream\nendobj\n"), pdflimit.ErrUnsupported},
		{"a stream without an object", []byte("%PDF-1.7\n<< >>\nstream\nx\nendstream\n"), pdflimit.ErrUnsupported},
		{"too many trailers", bytes.Repeat([]byte("trailer\n<< /Size 1 >>\n"), 257), pdflimit.ErrLimit},
		{"an object stream declaring too many objects", withStream("<< /Type /ObjStm /N 5000 /First 4 >>", []byte("1 0 ")), pdflimit.ErrLimit},
		{"a Flate image is not decoded", withStream("<< /Type /XObject /Subtype /Image /Filter /FlateDecode >>", spaces), nil},
		{"image data is not decoded", withStream("<< /Type /XObject /Subtype /Image /Filter /DCTDecode >>", bytes.Repeat([]byte{0xff}, 1<<10)), nil},
		{"a small LZW stream", withStream("<< /Filter /LZWDecode >>", []byte{0x80, 0x0b, 0x60, 0x50, 0x22, 0x0c, 0x0c, 0x85, 0x01}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pdflimit.Check(context.Background(), tt.doc, limits)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

func TestCheck_StopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, pdflimit.Check(ctx, pdftest.Bomb(1, 1<<10), limits), context.Canceled)
}

func manyStreams(n, size int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	data := deflate(bytes.Repeat([]byte{' '}, size))
	for i := range n {
		fmt.Fprintf(&b, "%d 0 obj\n<< /Filter /FlateDecode /Length %d >>\nstream\n", i+1, len(data))
		b.Write(data)
		b.WriteString("\nendstream\nendobj\n")
	}
	return b.Bytes()
}

// xrefTable returns a document whose classic cross-reference table has n
// entries (and no objects).
func xrefTable(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%PDF-1.4\nxref\n0 %d\n", n)
	for range n {
		b.WriteString("0000000000 65535 f \n")
	}
	b.WriteString("trailer\n<< /Size 1 >>\nstartxref\n9\n%%EOF\n")
	return b.Bytes()
}

func TestCheck_IsLinearInTheDocument(t *testing.T) {
	// Keywords repeated over 8 MB: each is looked at once.
	for _, unit := range []string{">>\nstream\n", "trailer <<", "trailer ", "xref\n", "0 obj "} {
		doc := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte(unit), 8<<20/len(unit))...)
		start := time.Now()
		_ = pdflimit.Check(context.Background(), doc, pdflimit.Limits{MaxDecodedBytes: 4 << 20, MaxObjects: 1 << 30, MaxRowBytes: 1 << 20})
		t.Logf("%q x %d: %v", unit, 8<<20/len(unit), time.Since(start))
		assert.Less(t, time.Since(start), 20*time.Second, "%q repeated", unit)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(pdftest.Bomb(2, 4<<10))
	f.Add(withStream("<< /Filter [/FlateDecode /ASCIIHexDecode] /DecodeParms [null << /Columns 4 >>] >>", deflate([]byte("414243>"))))
	f.Add(withStream("<< /Type /ObjStm /N 2 /First 8 >>", []byte("1 0 2 4 << >> [ ]")))
	f.Add(xrefTable(3))
	f.Add([]byte("%PDF-1.7\ntrailer\n<< /Encrypt 5 0 R >>\n"))
	small := pdflimit.Limits{MaxDecodedBytes: 1 << 20, MaxObjects: 100, MaxRowBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := pdflimit.Check(context.Background(), doc, small)
		if err != nil && !errors.Is(err, pdflimit.ErrLimit) && !errors.Is(err, pdflimit.ErrUnsupported) {
			t.Fatalf("an error that is neither a limit nor unsupported: %v", err)
		}
	})
}
