package validation

import (
	"io"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// maxJSONDepth bounds nesting so a hostile body cannot exhaust the stack.
const maxJSONDepth = 64

var registerJSON sync.Once

// RegisterDecoders makes StrictJSONDecoder the decoder of every JSON body
// openapi3filter validates, once per process: the value the validator checks
// must be the only reading of the bytes there is. New calls it; nothing
// replaces kin-openapi's decoders merely by being linked in.
func RegisterDecoders() {
	registerJSON.Do(func() { openapi3filter.RegisterBodyDecoder("application/json", StrictJSONDecoder) })
}

// StrictJSONDecoder is an openapi3filter.BodyDecoder that refuses what
// encoding/json would silently accept and a validator might read differently:
// duplicate object keys, trailing data after the value, and nesting deeper than
// 64 levels.
func StrictJSONDecoder(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	v, err := DecodeStrictJSON(data)
	if err != nil {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: err}
	}
	return v, nil
}

// DecodeStrictJSON decodes data into maps, slices, float64s, strings, bools
// and nils, refusing duplicate keys, trailing data and deep nesting.
func DecodeStrictJSON(data []byte) (any, error) {
	return decodeJSONDepth(data, maxJSONDepth)
}
