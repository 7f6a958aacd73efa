package apistacktest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/internal/docblocks"
)

// The testing guide's module of one's own: a new module importing the kit
// tidies offline and its test passes.
func TestDocs_TestkitModule(t *testing.T) {
	out := docblocks.RunModule(t, "docs/testing.md", "testkit-module")
	assert.Regexp(t, `(?m)^ok\s+example\.com/myservice`, out)
}
