// Package xmlbody decodes the storage API's XML bodies for kin-openapi's
// validation (openapi3filter), which has no application/xml decoder of its
// own: the storage server's request and response checks and the contract
// checks of its clients (protocol/contract) register it explicitly (Register),
// so no package replaces kin-openapi's decoders as a side effect of being
// linked in.
package xmlbody

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/apistack/apistack/internal/lifecycledoc"
)

// ContentType is the media type Decoder reads.
const ContentType = "application/xml"

var register sync.Once

// Register registers Decoder with openapi3filter for application/xml, once
// per process; the registry is the process's, so every caller registers the
// same decoder.
func Register() {
	register.Do(func() { openapi3filter.RegisterBodyDecoder(ContentType, Decoder) })
}

// Decoder is the openapi3filter.BodyDecoder of application/xml: a
// LifecycleConfiguration is read by lifecycledoc (strictly, against the XSD)
// into the generic value the OpenAPI schema is checked on, shaped by that
// schema's arrays (asArrays); an object-storage <Error> document into a map of
// its fields.
func Decoder(body io.Reader, _ http.Header, schema *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	data, err := lifecycledoc.ReadBody(body)
	if err != nil {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: err}
	}
	if isErrorDocument(data) {
		v, err := decodeErrorDocument(data)
		if err != nil {
			return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: err}
		}
		return v, nil
	}
	v, err := lifecycledoc.Value(data)
	if err != nil {
		return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: err}
	}
	return asArrays(v, schema), nil
}

// asArrays makes v an []any wherever the OpenAPI schema declares an array
// (an unwrapped XML list, xml.wrapped false) and v holds a single element. In
// XML one element and a list of one look the same: the XSD may allow an element
// once (Rule/Transition, at most once in the Rule's xs:all) where the OpenAPI
// schema, describing the protocol, allows a list.
func asArrays(v any, ref *openapi3.SchemaRef) any {
	if ref == nil || ref.Value == nil {
		return v
	}
	s := ref.Value
	if s.Type.Is(openapi3.TypeArray) {
		list, ok := v.([]any)
		if !ok {
			list = []any{v}
		}
		for i, item := range list {
			list[i] = asArrays(item, s.Items)
		}
		return list
	}
	if m, ok := v.(map[string]any); ok {
		for k, child := range m {
			m[k] = asArrays(child, s.Properties[k])
		}
	}
	return v
}

// isErrorDocument reports whether data's root element is <Error> without a namespace.
func isErrorDocument(data []byte) bool {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.RawToken()
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t.Name.Space == "" && t.Name.Local == "Error" && len(t.Attr) == 0
		case xml.Directive:
			return false
		}
	}
}

// decodeErrorDocument reads <Error> with text-only children into a map.
func decodeErrorDocument(data []byte) (map[string]any, error) {
	var doc struct {
		XMLName xml.Name
		Fields  []struct {
			XMLName xml.Name
			Value   string `xml:",chardata"`
			Inner   []byte `xml:",innerxml"`
		} `xml:",any"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("an <Error> document that is not well-formed: %w", err)
	}
	out := map[string]any{}
	for _, f := range doc.Fields {
		if _, dup := out[f.XMLName.Local]; dup || f.XMLName.Space != "" || bytes.ContainsRune(f.Inner, '<') {
			return nil, fmt.Errorf("the <Error> element %s is repeated, namespaced or not text", f.XMLName.Local)
		}
		out[f.XMLName.Local] = f.Value
	}
	return out, nil
}
