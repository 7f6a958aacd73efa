package lifecycledoc_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apistack/apistack/internal/lifecycledoc"
)

// FuzzDecode feeds arbitrary bodies to the decoder and validator: every failure
// is a *lifecycledoc.Error, and every accepted document survives a marshal and
// decode round trip unchanged.
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*", "*.xml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(body) < 4096 {
			f.Add(body)
		}
	}
	f.Add([]byte(""))
	f.Add([]byte(`<!DOCTYPE a [<!ENTITY b "c">]><a>&b;</a>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		cfg, err := lifecycledoc.Decode(body)
		if err != nil {
			var le *lifecycledoc.Error
			if !errors.As(err, &le) {
				t.Fatalf("a failure that is not a *lifecycledoc.Error: %v", err)
			}
			return
		}
		for _, versioned := range []bool{false, true} {
			if err := lifecycledoc.Check(cfg, versioned); err != nil {
				var le *lifecycledoc.Error
				if !errors.As(err, &le) {
					t.Fatalf("a check failure that is not a *lifecycledoc.Error: %v", err)
				}
			}
		}
		out, err := lifecycledoc.Marshal(cfg)
		if err != nil {
			t.Fatalf("marshalling an accepted document: %v", err)
		}
		again, err := lifecycledoc.Decode(out)
		if err != nil {
			t.Fatalf("the marshalled form of an accepted document is rejected: %v\n%s", err, out)
		}
		out2, err := lifecycledoc.Marshal(again)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("the round trip changed the document:\n%s\n%s", out, out2)
		}
	})
}
