package restaurant

import (
	"reflect"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// flatSchema returns a copy of s for the import's check of each entity, in
// which every allOf whose parts are plain objects (properties and required
// names, no other keyword that validates) is merged into one object schema.
// Both accept and refuse the same values: an allOf of plain objects asks
// each of its properties to match its schema and each required one to be
// present, as the merged schema does. The spec's schemas nest allOf three
// deep (an entity is a reference is an identified object, each part visited
// on its own, its keys sorted every time), so the merged ones check an
// entity in a fraction of the time. An allOf that is not of plain objects,
// or whose parts give one property two different schemas, is kept as it
// is. s itself is not modified.
func flatSchema(s *openapi3.Schema) *openapi3.Schema {
	return (&flattener{done: map[*openapi3.Schema]*openapi3.Schema{}}).schema(s)
}

// flattener remembers the copies it made: a schema used in many places (or
// within itself) is copied once.
type flattener struct {
	done map[*openapi3.Schema]*openapi3.Schema
}

func (f *flattener) ref(r *openapi3.SchemaRef) *openapi3.SchemaRef {
	if r == nil || r.Value == nil {
		return r
	}
	return &openapi3.SchemaRef{Ref: r.Ref, Value: f.schema(r.Value)}
}

func (f *flattener) refs(rs openapi3.SchemaRefs) openapi3.SchemaRefs {
	if rs == nil {
		return nil
	}
	out := make(openapi3.SchemaRefs, len(rs))
	for i, r := range rs {
		out[i] = f.ref(r)
	}
	return out
}

func (f *flattener) schema(s *openapi3.Schema) *openapi3.Schema {
	if c, ok := f.done[s]; ok {
		return c
	}
	c := new(openapi3.Schema)
	f.done[s] = c
	*c = *s
	c.AllOf, c.AnyOf, c.OneOf = f.refs(s.AllOf), f.refs(s.AnyOf), f.refs(s.OneOf)
	c.Not, c.Items = f.ref(s.Not), f.ref(s.Items)
	if s.AdditionalProperties.Schema != nil {
		c.AdditionalProperties.Schema = f.ref(s.AdditionalProperties.Schema)
	}
	if s.Properties != nil {
		c.Properties = make(openapi3.Schemas, len(s.Properties))
		for name, p := range s.Properties {
			c.Properties[name] = f.ref(p)
		}
	}
	if merged, ok := mergeAllOf(c); ok {
		*c = *merged
	}
	return c
}

// mergeAllOf merges s, a plain object with allOf parts that are plain
// objects (flattened already), into one plain object; false when it can't.
func mergeAllOf(s *openapi3.Schema) (*openapi3.Schema, bool) {
	if len(s.AllOf) == 0 || !plainObject(s) {
		return nil, false
	}
	merged := &openapi3.Schema{Properties: openapi3.Schemas{}, Description: s.Description}
	parts := []*openapi3.Schema{s}
	for _, p := range s.AllOf {
		if p == nil || p.Value == nil || len(p.Value.AllOf) > 0 || !plainObject(p.Value) {
			return nil, false
		}
		parts = append(parts, p.Value)
	}
	for _, p := range parts {
		if p.Type != nil {
			merged.Type = &openapi3.Types{openapi3.TypeObject}
		}
		for name, ps := range p.Properties {
			if have, ok := merged.Properties[name]; ok && have.Value != ps.Value {
				return nil, false
			}
			merged.Properties[name] = ps
		}
		for _, name := range p.Required {
			if !slices.Contains(merged.Required, name) {
				merged.Required = append(merged.Required, name)
			}
		}
	}
	return merged, true
}

// plainObject says whether s validates nothing but its type (none or
// object), properties and required names: every other keyword of s is an
// annotation or absent.
func plainObject(s *openapi3.Schema) bool {
	if s.Type != nil && !s.Type.Is(openapi3.TypeObject) {
		return false
	}
	rest := *s
	rest.Type, rest.Properties, rest.Required, rest.AllOf = nil, nil, nil, nil
	rest.Extensions, rest.Origin, rest.Title, rest.Description = nil, nil, "", ""
	rest.Example, rest.Examples, rest.ExternalDocs, rest.XML, rest.Deprecated, rest.Comment = nil, nil, nil, nil, false, ""
	return reflect.DeepEqual(rest, openapi3.Schema{})
}
