package descriptor_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/descriptor"
)

func TestDecodeFixture_RefusesAnUnknownFieldAsAFixtureError(t *testing.T) {
	var v struct {
		Name string `json:"name"`
	}
	require.NoError(t, descriptor.DecodeFixture(json.RawMessage(`{"name":"a"}`), &v))
	assert.Equal(t, "a", v.Name)

	for _, section := range []string{`{"name":"a","extra":1}`, `{"name":1}`, `[`} {
		err := descriptor.DecodeFixture(json.RawMessage(section), &v)
		var fe *descriptor.FixtureError
		require.True(t, errors.As(err, &fe), "%s: %v", section, err)
		assert.Empty(t, fe.Pointer, "at the section's root")
	}
}

// A copy's id keeps the original's first 24 characters and ends with the
// copy's tag: one tag maps every id of a copy the same way, two copies'
// ids differ.
func TestCopiedID_KeepsTheUUIDsHeadAndEndsWithTheTag(t *testing.T) {
	const id = "0b6c1f0e-4a2d-4c8e-9f3a-1d2e3f4a5b6c"
	tag := descriptor.CopyTag()
	require.Regexp(t, `^[0-9a-f]{12}$`, tag)
	copied := descriptor.CopiedID(id, tag)
	assert.Len(t, copied, len(id))
	assert.Equal(t, id[:24]+tag, copied)
	assert.Equal(t, copied, descriptor.CopiedID(id, tag))
	assert.NotEqual(t, copied, descriptor.CopiedID(id, descriptor.CopyTag()))
	assert.Equal(t, "short"+tag, descriptor.CopiedID("short", tag), "an id shorter than a UUID's head is kept whole")
}
