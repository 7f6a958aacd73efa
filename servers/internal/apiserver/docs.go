package apiserver

import (
	"bytes"
	"fmt"
	"net/url"
	"sync"

	"gopkg.in/yaml.v3"
)

// docsSpecPath is the spec the docs page loads: the API's spec with its
// servers made relative, so "Try it out" calls the port that served the
// page, whatever address the spec names.
const docsSpecPath = "/docs/openapi.yaml"

// docsSpecs memoizes docsSpec by API name: the specs are embedded, so each
// is rewritten once per process, not at every server start (the test kit
// starts a stack per test).
var docsSpecs sync.Map // API name -> []byte

// docsSpecOf is docsSpec of the spec of the API named name, once.
func docsSpecOf(name string, spec []byte) ([]byte, error) {
	if b, ok := docsSpecs.Load(name); ok {
		return b.([]byte), nil
	}
	b, err := docsSpec(spec)
	if err != nil {
		return nil, err
	}
	docsSpecs.Store(name, b)
	return b, nil
}

// docsSpec returns spec with each server URL replaced by its path alone
// ("/" when it has none). Swagger UI resolves a relative server URL against
// the URL it loaded the spec from: the origin of the page, so its requests
// are same-origin and need no CORS.
func docsSpec(spec []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("docs spec: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("docs spec: not a YAML mapping")
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "servers" {
			continue
		}
		for _, server := range root.Content[i+1].Content {
			for j := 0; j+1 < len(server.Content); j += 2 {
				key, value := server.Content[j], server.Content[j+1]
				switch key.Value {
				case "url":
					u, err := url.Parse(value.Value)
					if err != nil {
						return nil, fmt.Errorf("docs spec: server URL %q: %w", value.Value, err)
					}
					value.Value = u.EscapedPath()
					if value.Value == "" {
						value.Value = "/"
					}
				case "description":
					value.Value = "the port serving this page"
				}
			}
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("docs spec: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("docs spec: %w", err)
	}
	return out.Bytes(), nil
}
