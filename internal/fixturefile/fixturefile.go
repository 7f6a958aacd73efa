// Package fixturefile reads a sandbox fixture document (specs/sandbox,
// Fixture; its JSON Schema is specs/sandbox/fixture.schema.json) from a
// file in JSON or YAML, for the places that take one by path: `apistack
// sandbox create --fixture` and the test kit's WithFixture.
package fixturefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

// Read reads the fixture at path and returns it as JSON. A file that is
// not one JSON object is read as YAML (JSON is YAML too, so a malformed
// JSON file is reported by the YAML parser with its line).
func Read(path string) (json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	out, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("fixture %s: %w", path, err)
	}
	return out, nil
}

// Parse returns the fixture document data, JSON or YAML, as JSON: a
// mapping at the top.
func Parse(data []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		return json.RawMessage(trimmed), nil
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("neither JSON nor YAML: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, fmt.Errorf("a fixture is a mapping of API names to sections, not a %T", doc)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("YAML that has no JSON form: %w", err)
	}
	return out, nil
}
