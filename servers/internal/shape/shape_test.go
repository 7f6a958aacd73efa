package shape_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/shape"
)

const doc = `
openapi: 3.0.3
info: {title: t, version: 1.0.0}
paths: {}
components:
  schemas:
    Group:
      type: object
      properties:
        id: {type: string, format: uuid}
        name: {type: string}
        status: {type: string, enum: [queued, delivered]}
        cursor: {type: string, x-apistack-opaque: true}
        at: {type: string, format: date-time, nullable: true}
        tags: {type: array, items: {$ref: '#/components/schemas/Tag'}}
        extra: {type: object, additionalProperties: true}
        closed: {type: object, additionalProperties: false, properties: {a: {type: string}}}
    Tag:
      allOf:
        - type: object
          properties: {k: {type: string}}
        - type: object
          properties: {v: {type: integer}}
`

func schema(t *testing.T) *openapi3.Schema {
	t.Helper()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(doc))
	require.NoError(t, err)
	return spec.Components.Schemas["Group"].Value
}

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := shape.Decode("application/json; charset=utf-8", []byte(s))
	require.NoError(t, err)
	return v
}

func TestUndeclared_FindsMembersTheSchemaLeavesUnsaid(t *testing.T) {
	s := schema(t)
	got := shape.Undeclared(s, decode(t, `{"name":"a","colour":"x","tags":[{"k":"a","v":1,"w":2}],"extra":{"free":1},"closed":{"b":1}}`))
	assert.Equal(t, []string{"/colour", "/tags/0/w"}, got, "additionalProperties true or false is the spec's own word")
}

func TestDiff_ShapeNotValues(t *testing.T) {
	s := schema(t)
	tests := []struct {
		name, a, b string
		want       []shape.Difference
	}{
		{"values differ, shape same", `{"id":"1","name":"a","status":"queued","tags":[{"k":"x"}]}`, `{"id":"2","name":"b","status":"delivered","tags":[{"k":"y"},{"k":"z"}]}`, nil},
		{"opaque and timestamps by presence", `{"cursor":"abc","at":"2026-01-01T00:00:00Z"}`, `{"cursor":12,"at":null}`, nil},
		{"member missing", `{"name":"a","status":"queued"}`, `{"name":"a"}`, []shape.Difference{{Pointer: "/status", Message: "missing from the target"}}},
		{"member added", `{"name":"a"}`, `{"name":"a","colour":"x"}`, []shape.Difference{{Pointer: "/colour", Message: "present in the target only"}}},
		{"type", `{"name":"a"}`, `{"name":["a"]}`, []shape.Difference{{Pointer: "/name", Message: "type: recorded string, target array"}}},
		{"enum", `{"status":"queued"}`, `{"status":"lost"}`, []shape.Difference{{Pointer: "/status", Message: `enum: recorded "queued" is one of the spec's values, target "lost" is none`}}},
		{"array elements merged", `{"tags":[{"k":"a"},{"v":1}]}`, `{"tags":[{"k":"b"}]}`, []shape.Difference{{Pointer: "/tags/*/v", Message: "missing from the target"}}},
		{"empty arrays say nothing of their elements", `{"tags":[]}`, `{"tags":[{"k":"b"}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, shape.Diff(s, decode(t, tt.a), decode(t, tt.b)))
		})
	}
}

func TestPairs_MapsIdsTheTargetGaveInstead(t *testing.T) {
	got := map[string]string{}
	shape.Pairs(schema(t), decode(t, `{"id":"r1","name":"same","cursor":"c1","at":"2026-01-01T00:00:00Z","tags":[{"k":"x"}]}`),
		decode(t, `{"id":"t1","name":"other","cursor":"c2","at":"2026-02-01T00:00:00Z","tags":[{"k":"y"}]}`),
		func(a, b string) { got[a] = b })
	assert.Equal(t, map[string]string{"r1": "t1", "c1": "c2"}, got)
}

func TestXMLTree(t *testing.T) {
	v, err := shape.Decode("application/xml", []byte(`<LifecycleConfiguration><Rule><ID>a</ID></Rule><Rule><ID>b</ID><Status>Enabled</Status></Rule></LifecycleConfiguration>`))
	require.NoError(t, err)
	w, err := shape.Decode("application/xml", []byte(`<LifecycleConfiguration><Rule><ID>a</ID></Rule></LifecycleConfiguration>`))
	require.NoError(t, err)
	assert.Equal(t, []shape.Difference{
		{Pointer: "/LifecycleConfiguration/Rule/*/Status", Message: "missing from the target"},
	}, shape.Diff(nil, v, w), "two rules or one is a value; a rule without its Status is a shape")
	_, err = shape.Decode("text/plain", []byte("x"))
	assert.ErrorIs(t, err, shape.ErrNotStructured)
}
