package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The published schema is what the spec generates, and every reference in
// it resolves.
func TestGenerate_ThePublishedSchemaIsTheSpecs(t *testing.T) {
	root := filepath.Join("..", "..")
	spec, err := os.ReadFile(filepath.Join(root, "specs", "sandbox", "openapi.yaml"))
	require.NoError(t, err)
	got, err := Generate(spec)
	require.NoError(t, err)
	published, err := os.ReadFile(filepath.Join(root, "specs", "sandbox", "fixture.schema.json"))
	require.NoError(t, err)
	assert.Equal(t, string(got), string(published), "specs/sandbox/fixture.schema.json is stale: run make generate")

	var doc struct {
		Defs       map[string]any `json:"$defs"`
		Properties map[string]any `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(got, &doc))
	assert.ElementsMatch(t, []string{"pam", "fax", "storage", "restaurant"}, keys(doc.Properties))
	for _, m := range regexp.MustCompile(`"\$ref": "([^"]*)"`).FindAllStringSubmatch(string(got), -1) {
		name, ok := strings.CutPrefix(m[1], "#/$defs/")
		require.True(t, ok, "a reference outside the document: %s", m[1])
		assert.Contains(t, doc.Defs, name)
	}
	assert.NotContains(t, string(got), `"example"`)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
