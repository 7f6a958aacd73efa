package pathroute

import (
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/specload"
)

// loadSpecs loads every API's spec from specs.FS.
func loadSpecs(t *testing.T) map[string]*openapi3.T {
	t.Helper()
	names := specload.OpenAPIPaths()
	require.NotEmpty(t, names)
	out := make(map[string]*openapi3.T, len(names))
	for _, name := range names {
		doc, err := specload.Load(name)
		require.NoError(t, err)
		out[name] = doc
	}
	return out
}

// TestFastRouterRoutesAsMux holds the fast router to the mux router on every
// API's spec: for each path template, filled with ordinary values, values
// spelled like other templates' literal segments, empty, escaped or unusual
// ones, with a slash too many or too few, under every method (GET for all
// but the ordinary value), both routers return the same route, variables
// and error. Every operation's own plain
// path is answered by the fast router itself.
func TestFastRouterRoutesAsMux(t *testing.T) {
	for name, doc := range loadSpecs(t) {
		t.Run(strings.TrimSuffix(name, "/openapi.yaml"), func(t *testing.T) {
			router, err := New(doc)
			require.NoError(t, err)
			fast := router.(*fastRouter)
			require.NotNil(t, fast.templates, "the fast router takes every template of the %s spec", name)

			literals := map[string]bool{}
			for _, tpl := range fast.templates {
				for _, s := range tpl.segments {
					if s.variable == "" && s.literal != "" {
						literals[s.literal] = true
					}
				}
			}
			values := []string{"demo", "0b6f3c1e-8a2d-4c59-9f0e-2d7c1a4b5e6f", "", "a%2Fb", "caf%C3%A9", "a%20b", "x.y~z", "%7Edemo"}
			for l := range literals {
				values = append(values, l)
			}
			methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}
			answered := 0
			for _, tpl := range fast.templates {
				for _, v := range values {
					var b strings.Builder
					for _, s := range tpl.segments {
						b.WriteByte('/')
						if s.variable != "" {
							b.WriteString(v)
						} else {
							b.WriteString(s.literal)
						}
					}
					p := b.String()
					for _, path := range []string{p, p + "/", p + "/extra", strings.TrimSuffix(p[:strings.LastIndex(p, "/")+1], "/"), "/" + p, p + "?q=1"} {
						if path == "" {
							path = "/"
						}
						tried := methods
						if v != "demo" {
							tried = methods[:1] // every method once per path shape; GET for every value
						}
						for _, m := range tried {
							req, err := http.NewRequest(m, "http://127.0.0.1:1"+path, nil)
							require.NoError(t, err, path)
							wantRoute, wantVars, wantErr := fast.slow.FindRoute(req)
							gotRoute, gotVars, gotErr := fast.FindRoute(req)
							require.Equal(t, wantErr, gotErr, "%s %s", m, path)
							require.Equal(t, wantRoute, gotRoute, "%s %s", m, path)
							require.Equal(t, wantVars, gotVars, "%s %s", m, path)
							if _, _, ok := fast.find(req); ok {
								answered++
							}
						}
					}
				}
			}
			for _, tpl := range fast.templates {
				for m := range tpl.pathItem.Operations() {
					var b strings.Builder
					for _, s := range tpl.segments {
						b.WriteString("/")
						b.WriteString(s.literal + s.variable)
					}
					req, err := http.NewRequest(m, "http://127.0.0.1:1"+b.String(), nil)
					require.NoError(t, err)
					_, _, ok := fast.find(req)
					assert.True(t, ok, "%s %s is routed by the fast router", m, b.String())
				}
			}
			t.Logf("%d templates; %d requests answered by the fast router", len(fast.templates), answered)
		})
	}
}

// TestFastRouterStandsAsideForOtherTemplates: a spec with a template the
// fast router does not take (a variable within a segment) is routed by the
// mux router alone.
func TestFastRouterStandsAsideForOtherTemplates(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData([]byte(`
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /files/{name}.json:
    get:
      parameters: [{name: name, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /plain:
    get:
      responses: {"200": {description: ok}}
`))
	require.NoError(t, err)
	router, err := New(doc)
	require.NoError(t, err)
	fast := router.(*fastRouter)
	assert.Nil(t, fast.templates)
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/files/a.json", nil)
	require.NoError(t, err)
	route, vars, err := fast.FindRoute(req)
	require.NoError(t, err)
	assert.Equal(t, "/files/{name}.json", route.Path)
	assert.Equal(t, map[string]string{"name": "a"}, vars)
}
