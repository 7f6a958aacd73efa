package clients_test

import (
	"io/fs"
	"iter"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/specs"
)

// leaks walks t (and what it is made of: elements, fields, the parameters
// and results of functions) and reports every type from a generated package
// (gen/...), so the generator's names never become a client's API.
func leaks(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	if seen[t] {
		return
	}
	seen[t] = true
	if strings.Contains(t.PkgPath(), "/apistack/gen/") {
		*out = append(*out, path+": "+t.String())
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		leaks(t.Elem(), path, seen, out)
	case reflect.Map:
		leaks(t.Key(), path, seen, out)
		leaks(t.Elem(), path, seen, out)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				leaks(f.Type, path+"."+f.Name, seen, out)
			}
		}
	case reflect.Func:
		for i := range t.NumIn() {
			leaks(t.In(i), path+"(in)", seen, out)
		}
		for i := range t.NumOut() {
			leaks(t.Out(i), path+"(out)", seen, out)
		}
	}
}

// The convention, checked on every method of the four clients: the
// context first, List<Plural> returns an iter.Seq2 of a value and an error,
// Get<Noun> returns a pointer and an error, and no parameter or result is
// (or holds) a generated type. API() is the one door to the generated
// client, by design.
func TestConvention_EveryMethod(t *testing.T) {
	ctxType := reflect.TypeFor[interface{ Done() <-chan struct{} }]()
	errType := reflect.TypeFor[error]()
	for _, c := range []any{&pam.Client{}, &fax.Client{}, &storage.Client{}, &restaurant.Client{}} {
		ct := reflect.TypeOf(c)
		for i := range ct.NumMethod() {
			m := ct.Method(i)
			name := ct.Elem().String() + "." + m.Name
			if m.Name == "API" {
				continue
			}
			var found []string
			leaks(m.Type, name, map[reflect.Type]bool{}, &found)
			assert.Empty(t, found, "%s exposes generated types", name)

			ft := m.Type // receiver first
			if ft.NumIn() > 1 && ft.In(1).Kind() == reflect.Interface && ft.In(1).Implements(ctxType) {
				// takes a context first
			} else if strings.HasPrefix(m.Name, "List") || strings.HasPrefix(m.Name, "Get") {
				t.Errorf("%s does not take a context.Context first", name)
			}
			switch {
			case strings.HasPrefix(m.Name, "List"):
				if assert.Equal(t, 1, ft.NumOut(), name) {
					out := ft.Out(0)
					assert.True(t, strings.HasPrefix(out.String(), "iter.Seq2["), "%s returns %s, not an iter.Seq2", name, out)
					if out.Kind() == reflect.Func && out.NumIn() == 1 {
						yield := out.In(0)
						assert.NotEqual(t, reflect.Pointer, yield.In(0).Kind(), "%s yields pointers", name)
						assert.Equal(t, errType, yield.In(1), name)
					}
				}
			case strings.HasPrefix(m.Name, "Get") && m.Name != "GetMedia":
				if assert.Equal(t, 2, ft.NumOut(), name) {
					assert.Equal(t, reflect.Pointer, ft.Out(0).Kind(), "%s returns %s, not a pointer", name, ft.Out(0))
					assert.Equal(t, errType, ft.Out(1), name)
				}
			}
		}
	}
	var _ iter.Seq2[int, error] // the shape List methods return

	// Nor does any client's error, reached with errors.As.
	for _, e := range []any{pam.Error{}, fax.Error{}, storage.Error{}, restaurant.Error{}, restaurant.Change{}} {
		var found []string
		leaks(reflect.TypeOf(e), reflect.TypeOf(e).String(), map[reflect.Type]bool{}, &found)
		assert.Empty(t, found, "%T exposes generated types", e)
	}
}

// Every operation of the four specs has a method on its client: the method
// of the operation's name, or the one named here.
func TestConvention_EveryOperationIsWrapped(t *testing.T) {
	renamed := map[string]string{
		"IssueServiceToken":    "Token", // pam: the token the calls use
		"ListFaxApplications":  "ListApplications",
		"CreateFaxApplication": "CreateApplication",
		"GetFaxApplication":    "GetApplication",
		"UpdateFaxApplication": "UpdateApplication",
		"DeleteFaxApplication": "DeleteApplication",
		"Login":                "Token", // restaurant: the token the calls use
	}
	operationID := regexp.MustCompile(`(?m)^\s+operationId:\s*(\w+)\s*$`)
	for api, client := range map[string]any{"pam": &pam.Client{}, "fax": &fax.Client{}, "storage": &storage.Client{}, "restaurant": &restaurant.Client{}} {
		doc, err := fs.ReadFile(specs.FS, api+"/openapi.yaml")
		require.NoError(t, err)
		ops := operationID.FindAllStringSubmatch(string(doc), -1)
		require.NotEmpty(t, ops, api)
		for _, op := range ops {
			name := op[1]
			if r, ok := renamed[name]; ok {
				name = r
			}
			_, ok := reflect.TypeOf(client).MethodByName(name)
			assert.True(t, ok, "%s: operation %s has no method %s", api, op[1], name)
		}
	}
}
