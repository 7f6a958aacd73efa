package restaurant

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantserver"
)

// TestFlatSchemaChecksWhatTheSpecChecks holds the import's merged schemas to
// the spec's own: for every entity of a demo configuration, as it is and
// with each of its fields (and each field of its references) removed or
// given a value of every other JSON type, both accept the same values and
// explain a refusal with the same pointer and reason.
func TestFlatSchemaChecksWhatTheSpecChecks(t *testing.T) {
	set, err := loadSchemas()
	require.NoError(t, err)
	doc, err := json.Marshal(Demo(DemoOptions{MenuItems: 40, Seed: 9}))
	require.NoError(t, err)
	var byKind map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc, &byKind))
	odd := []any{nil, "text", 12.5, -3.0, true, []any{}, []any{"x"}, map[string]any{}, map[string]any{"guid": 7}}
	checked, refused, merged := 0, 0, 0
	for _, k := range kinds {
		spec := loadSpecSchema(t, k.Schema)
		flat := set.schemas[k.Path]
		if len(spec.AllOf) > 0 && len(flat.AllOf) == 0 {
			merged++
		}
		var entities []json.RawMessage
		if k.Single {
			entities = []json.RawMessage{byKind[k.Path]}
		} else {
			require.NoError(t, json.Unmarshal(byKind[k.Path], &entities), k.Path)
		}
		for _, raw := range entities[:min(len(entities), 3)] {
			var fields map[string]any
			require.NoError(t, json.Unmarshal(raw, &fields))
			mutations := []func(map[string]any){func(map[string]any) {}}
			for name, v := range fields {
				mutations = append(mutations, func(m map[string]any) { delete(m, name) })
				for _, o := range odd {
					mutations = append(mutations, func(m map[string]any) { m[name] = o })
				}
				if list, ok := v.([]any); ok && len(list) > 0 {
					if ref, ok := list[0].(map[string]any); ok {
						for field := range ref {
							mutations = append(mutations, func(m map[string]any) { delete(m[name].([]any)[0].(map[string]any), field) })
							for _, o := range odd {
								mutations = append(mutations, func(m map[string]any) { m[name].([]any)[0].(map[string]any)[field] = o })
							}
						}
					}
				}
			}
			for i, mutate := range mutations {
				value := func() map[string]any {
					var m map[string]any
					require.NoError(t, json.Unmarshal(raw, &m))
					mutate(m)
					return m
				}
				want, got := spec.VisitJSON(value()), flat.VisitJSON(value())
				checked++
				where := fmt.Sprintf("%s mutation %d of %s", k.Path, i, raw)
				if want == nil {
					assert.NoError(t, got, where)
					continue
				}
				refused++
				if assert.Error(t, got, where) {
					assert.Equal(t, schemaProblem(want), schemaProblem(got), where)
				}
			}
		}
	}
	t.Logf("%d values checked, %d refused; %d of %d entity schemas merged", checked, refused, merged, len(kinds))
	assert.Positive(t, merged, "the spec's entity schemas are allOf of plain objects: some are merged")
	assert.Greater(t, refused, checked/4, "most mutations break the schema")
}

// loadSpecSchema returns the spec's own schema name.
func loadSpecSchema(t *testing.T, name string) *openapi3.Schema {
	t.Helper()
	spec, err := restaurantserver.GetSpec()
	require.NoError(t, err)
	ref := spec.Components.Schemas[name]
	require.NotNil(t, ref, name)
	return ref.Value
}
