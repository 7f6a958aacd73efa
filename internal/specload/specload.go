// Package specload parses the OpenAPI documents specs embeds. It stands
// apart from specs so that a module importing only the clients, which
// embed nothing but read specs, does not need kin-openapi.
package specload

import (
	"fmt"
	"io/fs"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apistack/apistack/specs"
)

// OpenAPIPaths returns the path in specs.FS of every API's document
// ("<api>/openapi.yaml"), sorted.
func OpenAPIPaths() []string {
	paths, err := fs.Glob(specs.FS, "*/openapi.yaml")
	if err != nil {
		panic(err) // the pattern is well formed: Glob fails on nothing else
	}
	return paths
}

// Load parses the document at path in specs.FS (e.g. "pam/openapi.yaml").
func Load(path string) (*openapi3.T, error) {
	data, err := fs.ReadFile(specs.FS, path)
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return doc, nil
}
