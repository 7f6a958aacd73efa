// Package shape compares JSON (and XML) documents by their shape rather
// than their values, guided by an OpenAPI schema: which fields are present,
// each one's JSON type, and whether a value is one the schema's enum lists.
// Values the schema marks as ids, timestamps or opaque tokens (Opaque) are
// compared by presence alone.
//
// It also finds the fields a document has that its schema does not declare
// (Undeclared), which a validator lets through wherever the schema leaves
// additionalProperties unsaid.
package shape

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// OpaqueExtension marks a schema whose values are opaque tokens (ids,
// cursors, signatures) that differ between two servers however faithful.
const OpaqueExtension = "x-apistack-opaque"

// Opaque reports whether the values of s are ids, timestamps or opaque
// tokens: format date-time, date or uuid, or the OpaqueExtension set true.
func Opaque(s *openapi3.Schema) bool {
	if s == nil {
		return false
	}
	switch s.Format {
	case "date-time", "date", "uuid":
		return true
	}
	if v, ok := s.Extensions[OpaqueExtension].(bool); ok && v {
		return true
	}
	for _, b := range branches(s) {
		if Opaque(b) {
			return true
		}
	}
	return false
}

// branches are the schemas s combines (allOf, oneOf, anyOf).
func branches(s *openapi3.Schema) []*openapi3.Schema {
	var out []*openapi3.Schema
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, r := range list {
			if r != nil && r.Value != nil {
				out = append(out, r.Value)
			}
		}
	}
	return out
}

// Property is the schema s declares for the member name of an object (nil
// when it declares none), looking through allOf, oneOf and anyOf.
func Property(s *openapi3.Schema, name string) *openapi3.Schema {
	if s == nil {
		return nil
	}
	if p := s.Properties[name]; p != nil && p.Value != nil {
		return p.Value
	}
	for _, b := range branches(s) {
		if p := Property(b, name); p != nil {
			return p
		}
	}
	if ap := s.AdditionalProperties.Schema; ap != nil && ap.Value != nil {
		return ap.Value
	}
	return nil
}

// Items is the schema of an array's elements (nil when none is declared).
func Items(s *openapi3.Schema) *openapi3.Schema {
	if s == nil {
		return nil
	}
	if s.Items != nil && s.Items.Value != nil {
		return s.Items.Value
	}
	for _, b := range branches(s) {
		if it := Items(b); it != nil {
			return it
		}
	}
	return nil
}

// closed reports whether s lists an object's members: it declares
// properties (itself or through its branches) and says nothing of others.
func closed(s *openapi3.Schema) bool {
	if s == nil {
		return false
	}
	if s.AdditionalProperties.Has != nil || s.AdditionalProperties.Schema != nil {
		return false
	}
	declares := len(s.Properties) > 0
	for _, b := range branches(s) {
		if b.AdditionalProperties.Has != nil || b.AdditionalProperties.Schema != nil {
			return false
		}
		if hasProperties(b) {
			declares = true
		}
	}
	return declares
}

func hasProperties(s *openapi3.Schema) bool {
	if len(s.Properties) > 0 {
		return true
	}
	for _, b := range branches(s) {
		if hasProperties(b) {
			return true
		}
	}
	return false
}

// enum lists the values s allows when it is an enumeration.
func enum(s *openapi3.Schema) []any {
	if s == nil {
		return nil
	}
	if len(s.Enum) > 0 {
		return s.Enum
	}
	for _, b := range branches(s) {
		if e := enum(b); len(e) > 0 {
			return e
		}
	}
	return nil
}

func nullable(s *openapi3.Schema) bool {
	if s == nil {
		return false
	}
	if s.Nullable {
		return true
	}
	for _, b := range branches(s) {
		if nullable(b) {
			return true
		}
	}
	return false
}

// Undeclared lists, as JSON pointers, the members of doc's objects that
// the schema does not declare where it leaves additionalProperties unsaid
// (where it says false, a validator reports them already).
func Undeclared(s *openapi3.Schema, doc any) []string {
	var out []string
	undeclared(s, doc, "", &out)
	return out
}

func undeclared(s *openapi3.Schema, doc any, ptr string, out *[]string) {
	if s == nil {
		return
	}
	s = Resolve(s, doc)
	switch v := doc.(type) {
	case map[string]any:
		check := closed(s)
		for _, k := range sortedKeys(v) {
			p := Property(s, k)
			if p == nil {
				if check {
					*out = append(*out, ptr+"/"+escape(k))
				}
				continue
			}
			undeclared(p, v[k], ptr+"/"+escape(k), out)
		}
	case []any:
		it := Items(s)
		for i, e := range v {
			undeclared(it, e, ptr+"/"+strconv.Itoa(i), out)
		}
	}
}

// Unknown stands, in a document given to Diff, for a value whose shape is
// not known (a secret a recording redacted): it differs from nothing.
var Unknown any = unknown{}

type unknown struct{}

// Difference is one way two documents' shapes differ.
type Difference struct {
	// Pointer is where, a JSON pointer in which "*" stands for any element
	// of an array.
	Pointer string
	// Message says how: "missing from the target", "type: recorded string,
	// target number", ...
	Message string
}

// Diff compares the shape of recorded with that of target under the schema
// s (nil compares without one): members present in one only, JSON types,
// enum membership; array elements are compared merged (every element's
// members), and only when both arrays have some.
func Diff(s *openapi3.Schema, recorded, target any) []Difference {
	var out []Difference
	diff(s, "", recorded, target, &out)
	return out
}

func diff(s *openapi3.Schema, ptr string, a, b any, out *[]Difference) {
	if Opaque(s) || a == Unknown || b == Unknown {
		return
	}
	s = Resolve(s, a)
	ta, tb := typeOf(a), typeOf(b)
	if ta != tb {
		if (ta == "null" || tb == "null") && nullable(s) {
			return
		}
		*out = append(*out, Difference{Pointer: ptr, Message: fmt.Sprintf("type: recorded %s, target %s", ta, tb)})
		return
	}
	switch x := a.(type) {
	case map[string]any:
		y := b.(map[string]any)
		keys := sortedKeys(x)
		for _, k := range sortedKeys(y) {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			xv, inX := x[k]
			yv, inY := y[k]
			p := ptr + "/" + escape(k)
			switch {
			case !inY:
				*out = append(*out, Difference{Pointer: p, Message: "missing from the target"})
			case !inX:
				*out = append(*out, Difference{Pointer: p, Message: "present in the target only"})
			default:
				diff(Property(s, k), p, xv, yv, out)
			}
		}
	case []any:
		y := b.([]any)
		if len(x) == 0 || len(y) == 0 {
			return
		}
		diff(Items(s), ptr+"/*", merge(x), merge(y), out)
	default:
		values := enum(s)
		if len(values) == 0 {
			return
		}
		inA, inB := member(values, a), member(values, b)
		if inA != inB {
			*out = append(*out, Difference{Pointer: ptr, Message: fmt.Sprintf("enum: recorded %v is %s of the spec's values, target %v is %s",
				show(a), oneOrNot(inA), show(b), oneOrNot(inB))})
		}
	}
}

func oneOrNot(in bool) string {
	if in {
		return "one"
	}
	return "none"
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// merge is the elements of an array as one: objects' members united (each
// member's values merged), arrays' elements joined, else the first
// non-null element.
func merge(list []any) any {
	objects := map[string][]any{}
	var arrays []any
	var first any
	isObject, isArray := false, false
	for _, e := range list {
		switch v := e.(type) {
		case map[string]any:
			isObject = true
			for k, val := range v {
				objects[k] = append(objects[k], val)
			}
		case []any:
			isArray = true
			arrays = append(arrays, v...)
		case nil:
		default:
			if first == nil {
				first = v
			}
		}
	}
	switch {
	case isObject:
		m := make(map[string]any, len(objects))
		for k, vals := range objects {
			m[k] = merge(vals)
		}
		return m
	case isArray:
		return arrays
	}
	return first
}

func member(values []any, v any) bool {
	for _, e := range values {
		if fmt.Sprint(e) == fmt.Sprint(v) {
			return true
		}
	}
	return false
}

// typeOf is the JSON type of a decoded value.
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, int, int64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escape is a member name as a JSON pointer token.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// ErrNotStructured is the error of a body that is neither JSON nor XML.
var ErrNotStructured = errors.New("body is neither JSON nor XML")

// Decode reads a body whose Content-Type is contentType as a document:
// JSON decoded with numbers kept exact, XML as a tree (XMLTree).
func Decode(contentType string, body []byte) (any, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("JSON body: %w", err)
		}
		return v, nil
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		return XMLTree(body)
	}
	return nil, ErrNotStructured
}

// XMLTree reads an XML document as nested objects: an element is an
// object of its child elements by name, each name an array of the elements
// of that name (how many there are is a value, not a shape), an element
// without children is its text as a string.
func XMLTree(body []byte) (any, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("XML body: no root element")
			}
			return nil, fmt.Errorf("XML body: %w", err)
		}
		if start, ok := tok.(xml.StartElement); ok {
			v, err := xmlElement(dec)
			if err != nil {
				return nil, err
			}
			return map[string]any{start.Name.Local: v}, nil
		}
	}
}

func xmlElement(dec *xml.Decoder) (any, error) {
	children := map[string]any{}
	var text strings.Builder
	has := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("XML body: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			v, err := xmlElement(dec)
			if err != nil {
				return nil, err
			}
			has = true
			name := t.Name.Local
			prev, _ := children[name].([]any)
			children[name] = append(prev, v)
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if has {
				return children, nil
			}
			return strings.TrimSpace(text.String()), nil
		}
	}
}

// MediaSchema is the schema of the content of type contentType among
// content (nil when none is declared), matching on the media type alone.
func MediaSchema(content openapi3.Content, contentType string) *openapi3.Schema {
	if content == nil {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	m := content.Get(mt)
	if m == nil || m.Schema == nil {
		return nil
	}
	return m.Schema.Value
}

// ResponseSchema is the schema op declares for a response of status and
// contentType (nil when none is).
func ResponseSchema(op *openapi3.Operation, status int, contentType string) *openapi3.Schema {
	r := Response(op, status)
	if r == nil {
		return nil
	}
	return MediaSchema(r.Content, contentType)
}

// Response is the response op declares for status (the default one when it
// declares none for status; nil when neither).
func Response(op *openapi3.Operation, status int) *openapi3.Response {
	if op == nil || op.Responses == nil {
		return nil
	}
	ref := op.Responses.Status(status)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil {
		return nil
	}
	return ref.Value
}

// Pairs walks recorded and target side by side (arrays element by element)
// and calls f with each pair of different strings found where the schema
// marks values as opaque (Opaque), or at a member named "id", "guid" or
// ending in "_id" or "Id": the ids one server gave that the other knows by
// another value.
func Pairs(s *openapi3.Schema, recorded, target any, f func(recorded, target string)) {
	pairs(s, "", recorded, target, f)
}

func pairs(s *openapi3.Schema, name string, a, b any, f func(string, string)) {
	s = Resolve(s, a)
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return
		}
		for _, k := range sortedKeys(x) {
			if yv, ok := y[k]; ok {
				pairs(Property(s, k), k, x[k], yv, f)
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			return
		}
		for i := 0; i < len(x) && i < len(y); i++ {
			pairs(Items(s), name, x[i], y[i], f)
		}
	case string:
		y, ok := b.(string)
		if ok && x != y && x != "" && !timestamp(s) && (Opaque(s) || idName(name)) {
			f(x, y)
		}
	}
}

func idName(name string) bool {
	return name == "id" || name == "guid" || strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "Id")
}

func timestamp(s *openapi3.Schema) bool {
	return s != nil && (s.Format == "date-time" || s.Format == "date")
}

// TypeName is the JSON type of a decoded document ("object", "array", ...).
func TypeName(v any) string { return typeOf(v) }

// Resolve is the branch of a oneOf or anyOf schema that doc is (by the
// discriminator when there is one, else the first branch doc validates
// against), or s itself when s is no such choice or no branch fits.
func Resolve(s *openapi3.Schema, doc any) *openapi3.Schema {
	if s == nil || len(s.Properties) > 0 {
		return s
	}
	choices := s.OneOf
	if len(choices) == 0 {
		choices = s.AnyOf
	}
	if len(choices) == 0 {
		return s
	}
	if d := s.Discriminator; d != nil {
		if m, ok := doc.(map[string]any); ok {
			if v, ok := m[d.PropertyName].(string); ok {
				want := "/" + v
				if ref, ok := d.Mapping[v]; ok {
					want = ref.Ref
				}
				for _, b := range choices {
					if b != nil && b.Value != nil && (b.Ref == want || strings.HasSuffix(b.Ref, want)) {
						return b.Value
					}
				}
			}
		}
	}
	plainDoc := plain(doc)
	for _, b := range choices {
		if b != nil && b.Value != nil && b.Value.VisitJSON(plainDoc) == nil {
			return b.Value
		}
	}
	return s
}

// plain is doc with its json.Numbers as float64s, as kin-openapi's
// VisitJSON takes it.
func plain(doc any) any {
	switch v := doc.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = plain(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = plain(x)
		}
		return out
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return v.String()
		}
		return f
	}
	return doc
}
