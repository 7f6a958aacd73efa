package descriptor

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
)

// DecodeFixture decodes an API's fixture section into v, refusing a field v
// does not have: a section that does not decode is a *FixtureError at the
// section's root.
func DecodeFixture(section json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(section))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Fixturef("", "%v", err)
	}
	return nil
}

// CopyTag returns the tail that makes a copied row's id new (CopiedID): 12
// random hex digits, one tag for every row of one copy.
func CopyTag() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// CopiedID is the id a copy tagged tag gives the row id: a copy's ids keep
// the first 24 characters of the original's UUID and end with the copy's
// tag, so every statement of a copy maps an id without a lookup.
func CopiedID(id, tag string) string {
	if len(id) < 24 {
		return id + tag
	}
	return id[:24] + tag
}
