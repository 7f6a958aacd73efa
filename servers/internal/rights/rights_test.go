package rights_test

import (
	"context"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/rights"
)

// spec is a small API: a role table of two roles and one operation per kind
// of rule. ops replaces the operations' extensions by operation id.
func spec(t testing.TB, ops map[string]string) *openapi3.T {
	t.Helper()
	rule := func(id, fallback string) string {
		if v, ok := ops[id]; ok {
			return v
		}
		return fallback
	}
	doc := `openapi: 3.0.3
info: {title: t, version: 1.0.0}
security: [{token: []}]
paths:
  /login:
    post:
      operationId: Login
      security: []
` + rule("Login", "") + `
      responses: {'200': {description: ok}}
  /me:
    get:
      operationId: Me
` + rule("Me", "      x-apistack-roles: [authenticated]") + `
      responses: {'200': {description: ok}}
  /things:
    get:
      operationId: ListThings
` + rule("ListThings", "      x-apistack-roles: [reader, writer]") + `
      responses: {'200': {description: ok}}
    post:
      operationId: CreateThing
` + rule("CreateThing", "      x-apistack-roles: [writer]") + `
      responses: {'201': {description: ok}}
components:
  securitySchemes:
    token:
      type: http
      scheme: bearer
      x-apistack-roles:
        reader: Reads.
        writer: Reads and writes.
`
	loaded, err := openapi3.NewLoader().LoadFromData([]byte(doc))
	require.NoError(t, err)
	require.NoError(t, loaded.Validate(context.Background()))
	return loaded
}

func TestFromSpec_ReadsTheRolesOfEveryOperation(t *testing.T) {
	table, err := rights.FromSpec(spec(t, nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"reader", "writer"}, table.Roles())
	assert.Equal(t, []string{"CreateThing", "ListThings", "Login", "Me"}, table.Operations())

	none, reader, writer := table.Caller(), table.Caller("reader"), table.Caller("writer", "no-such-role")
	for _, tc := range []struct {
		op                   string
		none, reader, writer bool
	}{
		{"Login", true, true, true},
		{"Me", true, true, true},
		{"ListThings", false, true, true},
		{"CreateThing", false, false, true},
		{"NoSuchOperation", false, false, false},
	} {
		assert.Equal(t, tc.none, table.Allows(tc.op, none), "%s, no role", tc.op)
		assert.Equal(t, tc.reader, table.Allows(tc.op, reader), "%s, reader", tc.op)
		assert.Equal(t, tc.writer, table.Allows(tc.op, writer), "%s, writer", tc.op)
	}
	rule, ok := table.Rule("ListThings")
	require.True(t, ok)
	assert.Equal(t, []string{"reader", "writer"}, rule.Names)
	assert.Equal(t, table.Caller("reader"), table.Caller()|table.Role("reader"))
}

func TestFromSpec_RefusesASpecThatDoesNotSayWhoMayCall(t *testing.T) {
	for name, tc := range map[string]struct {
		ops  map[string]string
		want string
	}{
		"missing":          {map[string]string{"CreateThing": ""}, "CreateThing"},
		"unknown role":     {map[string]string{"CreateThing": "      x-apistack-roles: [admin]"}, `"admin", which is not a role`},
		"empty":            {map[string]string{"CreateThing": "      x-apistack-roles: []"}, "non-empty list"},
		"not a list":       {map[string]string{"CreateThing": "      x-apistack-roles: writer"}, "non-empty list"},
		"keyword and role": {map[string]string{"Me": "      x-apistack-roles: [authenticated, reader]"}, "stands alone"},
		"on an open one":   {map[string]string{"Login": "      x-apistack-roles: [reader]"}, "needs no credentials"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := rights.FromSpec(spec(t, tc.ops))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Deciding allocates nothing.
func TestAllows_AllocatesNothing(t *testing.T) {
	table, err := rights.FromSpec(spec(t, nil))
	require.NoError(t, err)
	roles := []string{"reader"}
	allocs := testing.AllocsPerRun(100, func() {
		if !table.Allows("ListThings", table.Caller(roles...)) {
			t.Fatal("refused")
		}
	})
	assert.Zero(t, allocs)
}

// BenchmarkAllows measures the decision alone: the operation's rule by its
// id and the caller's set from its roles.
func BenchmarkAllows(b *testing.B) {
	table, err := rights.FromSpec(spec(b, nil))
	require.NoError(b, err)
	roles := []string{"reader"}
	b.ReportAllocs()
	for b.Loop() {
		if !table.Allows("ListThings", table.Caller(roles...)) {
			b.Fatal("refused")
		}
	}
}
