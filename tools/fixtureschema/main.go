// Command fixtureschema writes the JSON Schema of the sandbox API's fixture
// document (specs/sandbox/fixture.schema.json) from the sandbox spec: its
// Fixture schema and every schema it refers to, under $defs, with the
// OpenAPI-only keywords (example, externalDocs) left out. go generate runs
// it (gen/sandboxapi), so the published schema is the one the sandbox API
// validates a fixture with.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

const refPrefix = "#/components/schemas/"

func main() {
	spec := flag.String("spec", "specs/sandbox/openapi.yaml", "the sandbox spec")
	out := flag.String("out", "specs/sandbox/fixture.schema.json", "where the JSON Schema goes")
	flag.Parse()
	data, err := os.ReadFile(*spec)
	if err == nil {
		data, err = Generate(data)
	}
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixtureschema:", err)
		os.Exit(1)
	}
}

// Generate returns the fixture's JSON Schema from the sandbox spec's text.
func Generate(spec []byte) ([]byte, error) {
	var doc struct {
		Info struct {
			Version string `yaml:"version"`
		} `yaml:"info"`
		Components struct {
			Schemas map[string]any `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("read the spec: %w", err)
	}
	defs := map[string]any{}
	var visit func(name string) error
	visit = func(name string) error {
		if _, done := defs[name]; done {
			return nil
		}
		s, ok := doc.Components.Schemas[name]
		if !ok {
			return fmt.Errorf("the spec has no schema %s", name)
		}
		defs[name] = nil // visiting
		var refs []string
		converted := convert(s, &refs)
		defs[name] = converted
		for _, r := range refs {
			if err := visit(r); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit("Fixture"); err != nil {
		return nil, err
	}
	root := defs["Fixture"].(map[string]any)
	delete(defs, "Fixture")
	out := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     "https://github.com/apistack/apistack/blob/main/specs/sandbox/fixture.schema.json",
		"title":   "apistack sandbox fixture (sandbox API " + doc.Info.Version + ")",
	}
	for k, v := range root {
		out[k] = v
	}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// convert returns the OpenAPI schema s as JSON Schema, adding the names of
// the component schemas it refers to to refs.
func convert(s any, refs *[]string) any {
	switch v := s.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			switch k {
			case "example", "externalDocs":
				continue
			case "$ref":
				if ref, ok := x.(string); ok && strings.HasPrefix(ref, refPrefix) {
					name := strings.TrimPrefix(ref, refPrefix)
					if !slices.Contains(*refs, name) {
						*refs = append(*refs, name)
					}
					out[k] = "#/$defs/" + name
					continue
				}
			}
			out[k] = convert(x, refs)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = convert(x, refs)
		}
		return out
	}
	return s
}
