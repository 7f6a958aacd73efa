package contractcoverage

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fieldsSpec = `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things:
    get:
      operationId: listThings
      responses:
        "200":
          description: ok
          headers:
            X-Next: {schema: {type: string}}
          content:
            application/json:
              schema:
                type: object
                properties:
                  data: {type: array, items: {$ref: '#/components/schemas/Thing'}}
                  tags: {type: array, items: {type: string}}
                  labels: {type: object, additionalProperties: {type: object, properties: {n: {type: integer}}}}
components:
  schemas:
    Thing:
      allOf:
        - type: object
          properties: {id: {type: string}, "a/b": {type: string}}
        - oneOf:
            - {type: object, properties: {kind: {type: string}}}
            - {type: object, properties: {parent: {$ref: '#/components/schemas/Thing'}}}
`

func thingsResponse(t *testing.T) *openapi3.Operation {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(fieldsSpec))
	require.NoError(t, err)
	return doc.Paths.Value("/things").Get
}

func TestResponseShape_PointersOfNestedArraysMapsCompositionAndRecursion(t *testing.T) {
	op := thingsResponse(t)
	got := newResponseShape(op.Responses.Status(200).Value).pointers()
	assert.Equal(t, []string{
		"header:X-Next",
		"/data", "/data/*/a~1b", "/data/*/id", "/data/*/kind", "/data/*/parent",
		"/labels", "/labels/*/n",
		"/tags",
	}, got, "a schema that contains itself (parent) is followed once")
}

func TestResponseShape_ObserveReportsEachFieldOnceAndStopsWhenComplete(t *testing.T) {
	op := thingsResponse(t)
	rs := newResponseShape(op.Responses.Status(200).Value)
	var found []string
	note := func(p string) { found = append(found, p) }

	rs.observe(http.Header{}, map[string]any{
		"data": []any{map[string]any{"id": "1"}, map[string]any{"id": "2", "kind": "k"}},
		"tags": []any{},
	}, note)
	assert.Equal(t, []string{"/data", "/data/*/id", "/data/*/kind", "/tags"}, found)
	assert.False(t, rs.complete.Load())

	found = nil
	rs.observe(http.Header{"X-Next": {"t"}}, map[string]any{
		"data":   []any{map[string]any{"id": "3", "a/b": nil, "parent": map[string]any{"id": "1"}}},
		"labels": map[string]any{"x": map[string]any{"n": 1.0}},
	}, note)
	assert.ElementsMatch(t, []string{"header:X-Next", "/data/*/a~1b", "/data/*/parent", "/labels", "/labels/*/n"}, found,
		"a field already seen is not reported again; a null value is present")
	assert.True(t, rs.complete.Load(), "every field seen: the response is not walked again")
}

func TestRecordFields_WritesEachFieldOnceAndReadsBack(t *testing.T) {
	dir := t.TempDir()
	orig := fieldRecord
	fieldRecord = newRecorder(dir, ".fields")
	origPairs := process
	process = newRecorder(dir, ".pairs") // Wants asks whether recording is on
	t.Cleanup(func() { fieldRecord, process = orig, origPairs })
	shapes.Clear()
	t.Cleanup(shapes.Clear)

	op := thingsResponse(t)
	for range 2 {
		require.NoError(t, RecordFields("things", op, 200, http.Header{"Content-Type": {"application/json"}}, nil,
			[]byte(`{"data":[{"id":"1"}]}`)))
	}
	got, err := ReadFieldsDir(dir)
	require.NoError(t, err)
	assert.Equal(t, map[Field]bool{
		{"things", "listThings", 200, "/data"}:      true,
		{"things", "listThings", 200, "/data/*/id"}: true,
	}, got)
	assert.True(t, Wants("things", op, 200), "fields remain unseen")
	assert.False(t, Wants("things", op, 404), "an undeclared status has no fields")
}

func TestReadUnreachableFields_PatternsAndBadEntries(t *testing.T) {
	l, err := ReadUnreachableFields(unreachableFile)
	require.NoError(t, err)
	u, ok := l.Excuse(Field{"pam", "GetGroup", 404, "/error_cause/*/error"})
	require.True(t, ok, "operationId '*' and a pointer to the elements name every field beneath")
	assert.NotEmpty(t, u.Reason)
	_, ok = l.Excuse(Field{"pam", "GetGroup", 400, "/error_cause/*/error"})
	assert.False(t, ok, "another status is not named")

	tests := []struct{ name, doc, want string }{
		{"no reason", "- {api: pam, operationId: GetGroup, status: 200, pointer: /name}", "has no reason"},
		{"undeclared", "- {api: pam, operationId: GetGroup, status: 200, pointer: /nope, reason: r}", "names no field"},
		{"twice", "- {api: pam, operationId: GetGroup, status: 200, pointer: /name, reason: r}\n- {api: pam, operationId: GetGroup, status: 200, pointer: /name, reason: r}", "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "u.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.doc), 0o600))
			_, err := ReadUnreachableFields(path)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestParseField(t *testing.T) {
	f, err := ParseField("pam GetGroup 200 /members/*/id\n")
	require.NoError(t, err)
	assert.Equal(t, Field{"pam", "GetGroup", 200, "/members/*/id"}, f)
	for _, bad := range []string{"", "pam GetGroup 200", "pam GetGroup ok /x", "a b 1 /x y"} {
		_, err := ParseField(bad)
		assert.Error(t, err, bad)
	}
}

// BenchmarkRecordFields is the per-response cost of field recording for a
// list of 100 things: "unseen" walks a body whose fields are not all seen
// (one is never present, so every element is looked at), "seen" is the
// steady state once every field has been seen (a flag check).
func BenchmarkRecordFields(b *testing.B) {
	dir := b.TempDir()
	orig, origPairs := fieldRecord, process
	fieldRecord, process = newRecorder(dir, ".fields"), newRecorder(dir, ".pairs")
	b.Cleanup(func() { fieldRecord, process = orig, origPairs })
	doc, err := openapi3.NewLoader().LoadFromData([]byte(fieldsSpec))
	require.NoError(b, err)
	op := doc.Paths.Value("/things").Get
	items := make([]any, 100)
	for i := range items {
		items[i] = map[string]any{"id": "x", "kind": "k", "a/b": "y"}
	}
	body := map[string]any{"data": items, "tags": []any{"t"}, "labels": map[string]any{"l": map[string]any{"n": 1.0}}}
	header := http.Header{"X-Next": {"t"}}
	b.Run("unseen", func(b *testing.B) {
		shapes.Clear()
		b.Cleanup(shapes.Clear)
		for b.Loop() {
			if err := RecordFields("things", op, 200, header, body, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("seen", func(b *testing.B) {
		shapes.Clear()
		b.Cleanup(shapes.Clear)
		full := map[string]any{"data": []any{map[string]any{"id": "x", "kind": "k", "a/b": "y", "parent": nil}},
			"tags": []any{}, "labels": map[string]any{"l": map[string]any{"n": 1.0}}}
		require.NoError(b, RecordFields("things", op, 200, header, full, nil))
		require.False(b, Wants("things", op, 200))
		for b.Loop() {
			if err := RecordFields("things", op, 200, header, body, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
