package contractcoverage

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/apistack/apistack/specs"
)

// Field coverage: beside each (operation, status) pair, every property a
// response schema of the pair declares, and every header the response
// declares, must appear in some response a test held to the spec.
//
// A body property is named by a JSON pointer (RFC 6901) from the body's root,
// with one wildcard: "*" stands for every element of an array and for every
// value of a map (an object's additionalProperties). "/data/*/id" is the id
// of each element of the array data. A property counts as produced when its
// key is present in some response, null included; an element's property
// when some element has it. Only named properties are fields: the array
// itself (/data) is one, its elements are not. A declared header is named
// "header:" and its name as the spec writes it ("header:Retry-After").
// allOf, oneOf and anyOf contribute the properties of every branch, at the
// pointer where the branch applies; a schema that contains itself is
// followed once.

// HeaderPrefix begins the name of a response header in a Field's Pointer.
const HeaderPrefix = "header:"

// Field is one property (or header) of one response.
type Field struct {
	// API, OperationID and Status name the response, as in Pair.
	API         string
	OperationID string
	Status      int
	// Pointer is the property's pointer, "/data/*/id", or "header:Name".
	Pointer string
}

// Pair is the response the field belongs to.
func (f Field) Pair() Pair { return Pair{API: f.API, OperationID: f.OperationID, Status: f.Status} }

// String is the field as a line of a record file: "api operationId status pointer".
func (f Field) String() string { return f.Pair().String() + " " + f.Pointer }

// ParseField reads a line written by Field.String.
func ParseField(line string) (Field, error) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return Field{}, fmt.Errorf("contractcoverage: malformed field line %q", line)
	}
	p, err := ParsePair(strings.Join(f[:3], " "))
	if err != nil {
		return Field{}, err
	}
	return Field{API: p.API, OperationID: p.OperationID, Status: p.Status, Pointer: f[3]}, nil
}

// declaredFields memoizes DeclaredFields: the specs are embedded, and the
// checks read every API's fields several times.
var declaredFields sync.Map // api -> []Field

// DeclaredFields returns every field the spec of api declares in the
// responses of its (operation, status) pairs, sorted.
func DeclaredFields(api string) ([]Field, error) {
	if v, ok := declaredFields.Load(api); ok {
		return slices.Clone(v.([]Field)), nil
	}
	fields, err := declaredFieldsOf(api)
	if err != nil {
		return nil, err
	}
	declaredFields.Store(api, fields)
	return slices.Clone(fields), nil
}

func declaredFieldsOf(api string) ([]Field, error) {
	path, ok := APIs[api]
	if !ok {
		return nil, fmt.Errorf("contractcoverage: unknown API %q", api)
	}
	data, err := fs.ReadFile(specs.FS, path)
	if err != nil {
		return nil, fmt.Errorf("contractcoverage: %w", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("contractcoverage: load %s: %w", path, err)
	}
	var out []Field
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code, ref := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil || ref.Value == nil {
					continue
				}
				for _, p := range newResponseShape(ref.Value).pointers() {
					out = append(out, Field{API: api, OperationID: op.OperationID, Status: status, Pointer: p})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// responseShape is what one response declares: its headers and the
// properties of its bodies (every content type's schema merged), with what
// this process has seen of them.
type responseShape struct {
	headers []*prop
	body    *shape
	// complete is set once every header and property has been seen: a
	// complete response is not looked at again.
	complete atomic.Bool
}

// shape is the declared structure of one JSON value: named properties, the
// elements of an array, the values of a map.
type shape struct {
	props  []*prop
	items  *shape // array elements; nil when not an array or a primitive one
	values *shape // additionalProperties values
	done   atomic.Bool
}

// prop is one named property (or header).
type prop struct {
	name    string
	pointer string
	seen    atomic.Bool
	shape   *shape // nil for a property with nothing declared beneath
}

func newResponseShape(r *openapi3.Response) *responseShape {
	rs := &responseShape{}
	names := make([]string, 0, len(r.Headers))
	for name := range r.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rs.headers = append(rs.headers, &prop{name: name, pointer: HeaderPrefix + name})
	}
	var schemas []*openapi3.Schema
	mts := make([]string, 0, len(r.Content))
	for mt := range r.Content {
		mts = append(mts, mt)
	}
	sort.Strings(mts)
	for _, mt := range mts {
		if m := r.Content[mt]; m != nil && m.Schema != nil && m.Schema.Value != nil {
			schemas = append(schemas, m.Schema.Value)
		}
	}
	rs.body = buildShape(schemas, "", map[*openapi3.Schema]bool{})
	return rs
}

// buildShape merges the structure schemas declare for the value at pointer;
// active holds the schemas being expanded above, so a recursive schema is
// followed once. It returns nil when nothing is declared beneath.
func buildShape(schemas []*openapi3.Schema, pointer string, active map[*openapi3.Schema]bool) *shape {
	props := map[string][]*openapi3.Schema{}
	var items, values []*openapi3.Schema
	var visit func(s *openapi3.Schema)
	visit = func(s *openapi3.Schema) {
		if s == nil || active[s] {
			return
		}
		active[s] = true
		defer delete(active, s)
		for name, p := range s.Properties {
			if p != nil && p.Value != nil {
				props[name] = append(props[name], p.Value)
			}
		}
		if s.Items != nil && s.Items.Value != nil {
			items = append(items, s.Items.Value)
		}
		if ap := s.AdditionalProperties.Schema; ap != nil && ap.Value != nil {
			values = append(values, ap.Value)
		}
		for _, group := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
			for _, b := range group {
				if b != nil {
					visit(b.Value)
				}
			}
		}
	}
	for _, s := range schemas {
		visit(s)
	}
	if len(props) == 0 && len(items) == 0 && len(values) == 0 {
		return nil
	}
	// The schemas at this pointer stay active while their children are
	// built, so a property that refers back to one stops there.
	for _, s := range schemas {
		active[s] = true
	}
	defer func() {
		for _, s := range schemas {
			delete(active, s)
		}
	}()
	sh := &shape{}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := pointer + "/" + escapePointer(name)
		sh.props = append(sh.props, &prop{name: name, pointer: p, shape: buildShape(props[name], p, active)})
	}
	if len(items) > 0 {
		sh.items = buildShape(items, pointer+"/*", active)
	}
	if len(values) > 0 {
		sh.values = buildShape(values, pointer+"/*", active)
	}
	if len(sh.props) == 0 && sh.items == nil && sh.values == nil {
		return nil
	}
	return sh
}

func escapePointer(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// pointers lists the fields of the response: headers, then body properties.
func (rs *responseShape) pointers() []string {
	var out []string
	for _, h := range rs.headers {
		out = append(out, h.pointer)
	}
	var walk func(sh *shape)
	walk = func(sh *shape) {
		if sh == nil {
			return
		}
		for _, p := range sh.props {
			out = append(out, p.pointer)
			walk(p.shape)
		}
		walk(sh.items)
		walk(sh.values)
	}
	walk(rs.body)
	return out
}

// observe marks what header and body (the decoded value) hold, calling
// found with each pointer seen for the first time. It stops early where
// everything beneath was seen before, so a response whose fields have all
// been seen costs a flag check.
func (rs *responseShape) observe(header http.Header, body any, found func(pointer string)) {
	if rs.complete.Load() {
		return
	}
	done := true
	for _, h := range rs.headers {
		if !h.seen.Load() {
			if len(header.Values(h.name)) > 0 && !h.seen.Swap(true) {
				found(h.pointer)
			} else {
				done = false
			}
		}
	}
	if rs.body != nil && body != nil {
		rs.body.observe(body, found)
	}
	if done && (rs.body == nil || rs.body.done.Load()) {
		rs.complete.Store(true)
	}
}

// observe walks v against sh, and marks sh done once every property beneath
// has been seen.
func (sh *shape) observe(v any, found func(pointer string)) {
	if sh.done.Load() {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for _, p := range sh.props {
			child, ok := v[p.name]
			if !ok {
				continue
			}
			if !p.seen.Load() && !p.seen.Swap(true) {
				found(p.pointer)
			}
			if p.shape != nil {
				p.shape.observe(child, found)
			}
		}
		if sh.values != nil && !sh.values.done.Load() {
			for k, child := range v {
				if !sh.named(k) {
					sh.values.observe(child, found)
					if sh.values.done.Load() {
						break
					}
				}
			}
		}
	case []any:
		if sh.items != nil {
			for _, item := range v {
				sh.items.observe(item, found)
				if sh.items.done.Load() {
					break
				}
			}
		}
	}
	if sh.isDone() {
		sh.done.Store(true)
	}
}

func (sh *shape) named(k string) bool {
	for _, p := range sh.props {
		if p.name == k {
			return true
		}
	}
	return false
}

func (sh *shape) isDone() bool {
	for _, p := range sh.props {
		if !p.seen.Load() || (p.shape != nil && !p.shape.done.Load()) {
			return false
		}
	}
	return (sh.items == nil || sh.items.done.Load()) && (sh.values == nil || sh.values.done.Load())
}

// shapes holds the response shapes of this process, one per response of an
// operation: built on first use.
var shapes sync.Map // shapeKey -> *responseShape

type shapeKey struct {
	api, op string
	status  int
}

// Wants reports whether RecordFields would look at a response to this
// operation with this status: recording is on and some declared field of
// it has not been seen yet in this process. A caller that must decode a
// body only to record it asks first.
func Wants(api string, op *openapi3.Operation, status int) bool {
	if !Enabled() || op == nil || op.OperationID == "" {
		return false
	}
	rs := responseShapeOf(api, op, status)
	return rs != nil && !rs.complete.Load()
}

func responseShapeOf(api string, op *openapi3.Operation, status int) *responseShape {
	key := shapeKey{api, op.OperationID, status}
	if v, ok := shapes.Load(key); ok {
		return v.(*responseShape)
	}
	ref := op.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		return nil
	}
	v, _ := shapes.LoadOrStore(key, newResponseShape(ref.Value))
	return v.(*responseShape)
}

// RecordFields notes which declared fields a response to op with this status,
// checked against the spec and held to it, carries: header is the response's
// header; value its decoded body (maps, slices and scalars, as encoding/json
// decodes into an any) when the caller has it, else body is decoded here with
// the openapi3filter body decoder registered for its content type (JSON, the
// storage API's XML), and only while some field of the response is still
// unseen in this process. Each field is written once per process; nothing is
// done when recording is off. An error writing the record is returned once,
// and recording stops.
func RecordFields(api string, op *openapi3.Operation, status int, header http.Header, value any, body []byte) error {
	if !Wants(api, op, status) {
		return nil
	}
	rs := responseShapeOf(api, op, status)
	if value == nil && len(body) > 0 {
		value = decodeBody(op, status, header, body)
	}
	var err error
	rs.observe(header, value, func(pointer string) {
		if e := fieldRecord.write(Field{API: api, OperationID: op.OperationID, Status: status, Pointer: pointer}.String()); e != nil && err == nil {
			err = e
		}
	})
	return err
}

// decodeBody decodes a response body that was held to the spec, so decodes,
// with the body decoder openapi3filter has for its content type; nil when
// there is none.
func decodeBody(op *openapi3.Operation, status int, header http.Header, body []byte) any {
	mt, _, _ := strings.Cut(header.Get("Content-Type"), ";")
	mt = strings.TrimSpace(mt)
	decode := openapi3filter.RegisteredBodyDecoder(mt)
	if decode == nil {
		return nil
	}
	var schema *openapi3.SchemaRef
	if ref := op.Responses.Status(status); ref != nil && ref.Value != nil {
		if m := ref.Value.Content.Get(mt); m != nil {
			schema = m.Schema
		}
	}
	value, err := decode(bytes.NewReader(body), header, schema, nil)
	if err != nil {
		return nil
	}
	return value
}
