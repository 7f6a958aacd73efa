// Package hartest checks, in tests, that a document is a HAR 1.2 file: it
// validates it against a JSON Schema of HAR 1.2 (har-1.2.schema.json, the
// objects and members the HAR 1.2 spec requires, custom members starting
// with an underscore) with santhosh-tekuri/jsonschema.
package hartest

import (
	"bytes"
	_ "embed"
	"os"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/har"
)

//go:embed har-1.2.schema.json
var schemaJSON []byte

const schemaURL = "https://apistack.example/har-1.2.schema.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
})

// Validate returns why data is no HAR 1.2 document (nil when it is one).
func Validate(data []byte) error {
	schema, err := compiled()
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return schema.Validate(doc)
}

// RequireValid fails t unless data is a HAR 1.2 document.
func RequireValid(t testing.TB, data []byte) {
	t.Helper()
	require.NoError(t, Validate(data), "not a valid HAR 1.2 document")
}

// ReadFile reads a closed recording at path with har.ReadFile, failing t
// unless the file is a HAR 1.2 document and its entries are whole (not
// marked truncated).
func ReadFile(t testing.TB, path string) *har.Log {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	RequireValid(t, data)
	log, err := har.ReadFile(path)
	require.NoError(t, err)
	require.False(t, log.Truncated, "a closed recording is not marked truncated")
	return log
}
