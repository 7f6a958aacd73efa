// Package shapetest checks, from a spec, that a client's own types carry
// every field of the schemas they stand for: each property is a field of the
// type under the spec's name (its json or xml tag, or a Go name that says
// it), of a compatible Go type (nullable ones able to hold null), each enum
// value is a constant of the field's type, and every schema of the spec is
// either given a type or skipped with the reason. A property added to the
// spec and missing in the client fails the client's tests, naming it.
//
// It reads the specs as YAML (package specs), not with an OpenAPI library,
// because the clients' tests must not import what a service importing the
// clients would then have to download (see clients/importable_test.go).
package shapetest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/apistack/apistack/specs"
)

// Schema is the part of an OpenAPI 3.0 schema object the check reads.
type Schema struct {
	Ref                  string             `yaml:"$ref"`
	Type                 string             `yaml:"type"`
	Format               string             `yaml:"format"`
	Nullable             bool               `yaml:"nullable"`
	Enum                 []any              `yaml:"enum"`
	Items                *Schema            `yaml:"items"`
	Properties           map[string]*Schema `yaml:"properties"`
	AllOf                []*Schema          `yaml:"allOf"`
	OneOf                []*Schema          `yaml:"oneOf"`
	AnyOf                []*Schema          `yaml:"anyOf"`
	AdditionalProperties any                `yaml:"additionalProperties"`
	GoType               string             `yaml:"x-go-type"`
}

// Spec is a spec's component schemas, by name.
type Spec struct {
	// Path is the spec's path under specs/.
	Path    string
	Schemas map[string]*Schema
}

// Load reads specs/<path> (such as "pam/openapi.yaml") from package specs.
func Load(t testing.TB, path string) *Spec {
	t.Helper()
	data, err := fs.ReadFile(specs.FS, path)
	if err != nil {
		t.Fatalf("shapetest: read spec %s: %v", path, err)
	}
	spec, err := Parse(path, data)
	if err != nil {
		t.Fatalf("shapetest: %v", err)
	}
	return spec
}

// Parse reads the component schemas of the spec data, named path.
func Parse(path string, data []byte) (*Spec, error) {
	var doc struct {
		Components struct {
			Schemas map[string]*Schema `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse spec %s: %w", path, err)
	}
	return &Spec{Path: path, Schemas: doc.Components.Schemas}, nil
}

// Type says which of the client's types stands for a schema.
type Type struct {
	// Schema is the component schema's name.
	Schema string
	// Go is a value of the client's type (its zero value will do).
	Go any
	// Fields names the Go field of a property whose field neither carries
	// the property's name in a json or xml tag nor is named after it
	// (application_name: "Name").
	Fields map[string]string
	// Extra are the type's fields that are no property of the schema: what
	// the client adds (derived values), each with the reason.
	Extra map[string]string
}

// Check is one client's check against one spec.
type Check struct {
	// Spec is the spec the client's types stand for.
	Spec *Spec
	// Types are the client's types, one per schema it exposes.
	Types []Type
	// NullAsZero are the nullable properties, by name wherever they
	// appear, that the client holds as a plain value whose zero value
	// stands for null, each with the reason.
	NullAsZero map[string]string
	// Instants are the string schemas, by name, that hold an instant without
	// saying format: date-time (an XML dateTime, a pattern of the API's
	// own), each with the reason; the client may hold them as time.Time.
	Instants map[string]string
	// Skip are the schemas the client exposes no type for, each with the
	// reason (a request body the client builds from its own parameters, an
	// envelope it unwraps, the error body its *Error carries).
	Skip map[string]string
	// Dir is the client package's directory, whose constants the enum
	// check reads; "" means the test's working directory (the package's).
	Dir string
}

// Run checks every schema of the spec: given a type, it is checked
// property by property (in a subtest named after the schema); skipped, it
// is left alone; neither, the test fails naming it. Schemas that are only a
// primitive with no enumeration (a pattern, a format) need neither.
func (c Check) Run(t *testing.T) {
	t.Helper()
	problems, err := c.Problems()
	if err != nil {
		t.Fatalf("shapetest: %v", err)
	}
	for _, p := range problems[""] {
		t.Error(p)
	}
	names := make([]string, 0, len(problems))
	for name := range problems {
		if name != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, p := range problems[name] {
				t.Error(p)
			}
		})
	}
}

// Problems are what Run reports, by the schema given a type ("" for what
// concerns the spec as a whole); every schema given a type has an entry,
// empty when its type matches.
func (c Check) Problems() (map[string][]string, error) {
	consts, err := constants(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("read the package's constants: %w", err)
	}
	k := &checker{spec: c.Spec, consts: consts, types: map[string]Type{}, nullAsZero: c.NullAsZero, instants: c.Instants}
	out := map[string][]string{}
	for _, ty := range c.Types {
		if _, ok := c.Spec.Schemas[ty.Schema]; !ok {
			out[""] = append(out[""], fmt.Sprintf("%s has no schema %s (a type is given for it)", c.Spec.Path, ty.Schema))
		}
		k.types[ty.Schema] = ty
	}
	names := make([]string, 0, len(c.Spec.Schemas))
	for name := range c.Spec.Schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := c.Spec.Schemas[name]
		ty, typed := k.types[name]
		_, skipped := c.Skip[name]
		switch {
		case typed && skipped:
			out[""] = append(out[""], fmt.Sprintf("schema %s is both given a type and skipped", name))
		case typed:
			k.seen = map[string]bool{}
			out[name] = append([]string{}, k.check(name, s, reflect.TypeOf(ty.Go), true, false)...)
		case !skipped && (s.Enum != nil || s.Properties != nil || s.AllOf != nil || s.OneOf != nil || s.AnyOf != nil):
			out[""] = append(out[""], fmt.Sprintf("schema %s of %s has no type in the client: give it one (shapetest.Type) or skip it saying why", name, c.Spec.Path))
		}
	}
	return out, nil
}

type checker struct {
	spec   *Spec
	consts map[string][]string // Go type name: its constants' values
	types  map[string]Type     // schema name: the client's type
	seen   map[string]bool     // schema and Go type pairs checked (recursion)
	// nullAsZero are the properties whose null is a zero value.
	nullAsZero map[string]string
	// instants are the string schemas that may be a time.Time.
	instants map[string]string
}

// resolve follows s's local $ref, returning the schema and its name ("" for
// an inline one).
func (k *checker) resolve(s *Schema) (*Schema, string) {
	name := ""
	for s != nil && s.Ref != "" {
		name = strings.TrimPrefix(s.Ref, "#/components/schemas/")
		s = k.spec.Schemas[name]
	}
	return s, name
}

// properties are s's properties, those of its allOf parts included.
func (k *checker) properties(s *Schema) map[string]*Schema {
	props := map[string]*Schema{}
	for _, part := range s.AllOf {
		part, _ := k.resolve(part)
		if part != nil {
			for n, p := range k.properties(part) {
				props[n] = p
			}
		}
	}
	for n, p := range s.Properties {
		props[n] = p
	}
	return props
}

var (
	timeType = reflect.TypeOf(time.Time{})
	anyType  = reflect.TypeOf((*any)(nil)).Elem()
)

// check compares the schema at path with Go type gt and returns what is
// wrong, each naming the path. top is true for a schema given as a Type.
// nullAsZero lets a nullable schema be held by a plain value.
func (k *checker) check(path string, s *Schema, gt reflect.Type, top, nullAsZero bool) []string {
	s, ref := k.resolve(s)
	if s == nil {
		return []string{fmt.Sprintf("%s: unresolved $ref", path)}
	}
	var problems []string
	if s.Nullable && !nullAsZero {
		switch gt.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		default:
			problems = append(problems, fmt.Sprintf("%s is nullable, but %s cannot hold null: make it a pointer", path, gt))
		}
	}
	// A pointer stands for an optional or nullable value of its element.
	for gt.Kind() == reflect.Pointer {
		gt = gt.Elem()
	}
	if gt == anyType || gt.Kind() == reflect.Interface {
		return problems // a value the client leaves to the caller to type
	}
	if len(s.Enum) > 0 {
		return append(problems, k.checkEnum(path, s, gt, top)...)
	}
	switch {
	case s.Type == "array":
		if gt.Kind() != reflect.Slice && gt.Kind() != reflect.Array {
			return append(problems, fmt.Sprintf("%s is an array, but its Go type is %s", path, gt))
		}
		if s.Items != nil {
			problems = append(problems, k.check(path+"[]", s.Items, gt.Elem(), false, false)...)
		}
	case s.Type == "string":
		if _, instant := k.instants[ref]; instant && gt == timeType {
			break
		}
		problems = append(problems, checkString(path, s, gt)...)
	case s.Type == "integer":
		switch gt.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			problems = append(problems, fmt.Sprintf("%s is an integer, but its Go type is %s", path, gt))
		}
	case s.Type == "number":
		if gt.Kind() != reflect.Float64 && gt.Kind() != reflect.Float32 {
			problems = append(problems, fmt.Sprintf("%s is a number, but its Go type is %s", path, gt))
		}
	case s.Type == "boolean":
		if gt.Kind() != reflect.Bool {
			problems = append(problems, fmt.Sprintf("%s is a boolean, but its Go type is %s", path, gt))
		}
	case len(k.properties(s)) > 0:
		key := ref + "|" + gt.String()
		if ref != "" && k.seen[key] {
			return problems
		}
		k.seen[key] = true
		if gt.Kind() != reflect.Struct {
			return append(problems, fmt.Sprintf("%s is an object, but its Go type is %s", path, gt))
		}
		name := ref
		if top {
			name = strings.SplitN(path, ".", 2)[0]
		}
		problems = append(problems, k.checkStruct(path, name, s, gt)...)
	case s.Type == "object" && s.AdditionalProperties != nil:
		if gt.Kind() != reflect.Map {
			problems = append(problems, fmt.Sprintf("%s is a map, but its Go type is %s", path, gt))
		}
	}
	return problems
}

// checkString compares a string schema with gt: date-time (and a schema
// typed time.Time for Go) is a time.Time; uuid a uuid.UUID or a string;
// byte a []byte or a string; anything else a string.
func checkString(path string, s *Schema, gt reflect.Type) []string {
	switch {
	case gt == timeType && (s.Format == "date-time" || s.Format == "date" || s.GoType == "time.Time"):
		return nil
	case s.Format == "uuid" && gt.Kind() == reflect.Array && gt.Len() == 16 && gt.Elem().Kind() == reflect.Uint8:
		return nil
	case s.Format == "byte" && gt.Kind() == reflect.Slice && gt.Elem().Kind() == reflect.Uint8:
		return nil
	case s.Format == "date-time" && gt != timeType:
		return []string{fmt.Sprintf("%s is a date-time, but its Go type is %s, not time.Time", path, gt)}
	case gt.Kind() == reflect.String:
		return nil
	}
	return []string{fmt.Sprintf("%s is a string, but its Go type is %s", path, gt)}
}

// checkEnum wants gt to be a named type of the client with a constant per
// value of the enumeration (null, of a nullable one, aside); for an
// enumeration given a Type (top), no other constant either.
func (k *checker) checkEnum(path string, s *Schema, gt reflect.Type, top bool) []string {
	if gt.Kind() != reflect.String || gt.Name() == "" || gt.PkgPath() == "" {
		return []string{fmt.Sprintf("%s is an enumeration, but its Go type %s is no named string type of the client with a constant per value", path, gt)}
	}
	values := k.consts[gt.Name()]
	var problems []string
	var enum []string
	for _, v := range s.Enum {
		if v == nil {
			continue
		}
		value := fmt.Sprint(v)
		enum = append(enum, value)
		if !slices.Contains(values, value) {
			problems = append(problems, fmt.Sprintf("%s: the value %q has no constant of type %s", path, value, gt))
		}
	}
	for _, v := range values {
		if top && !slices.Contains(enum, v) {
			problems = append(problems, fmt.Sprintf("%s: the constant %q of type %s is no value of the enumeration", path, v, gt))
		}
	}
	return problems
}

// checkStruct wants a field of gt per property of s, of a compatible type,
// and no field that is no property (but the Extra ones).
func (k *checker) checkStruct(path, schemaName string, s *Schema, gt reflect.Type) []string {
	ty := k.types[schemaName]
	props := k.properties(s)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	var problems []string
	used := map[string]bool{}
	for _, prop := range names {
		f, ok := fieldOf(gt, prop, ty.Fields[prop])
		if !ok {
			problems = append(problems, fmt.Sprintf("%s.%s: %s has no field for the property %q (a field tagged json:%q, or named after it)", path, prop, gt, prop, prop))
			continue
		}
		used[f.Name] = true
		_, zero := k.nullAsZero[prop]
		problems = append(problems, k.check(path+"."+prop, props[prop], f.Type, false, zero)...)
	}
	for i := range gt.NumField() {
		f := gt.Field(i)
		if !f.IsExported() || used[f.Name] || f.Name == "XMLName" || f.Tag.Get("json") == "-" {
			continue
		}
		if _, extra := ty.Extra[f.Name]; !extra {
			problems = append(problems, fmt.Sprintf("%s: the field %s.%s is no property of the schema (remove it, or list it in Extra saying why)", path, gt, f.Name))
		}
	}
	return problems
}

// fieldOf finds prop's field of gt: the one named goName when given, else
// the one whose json or xml tag names prop, else the one whose name is
// prop's without case and underscores (created_at: CreatedAt).
func fieldOf(gt reflect.Type, prop, goName string) (reflect.StructField, bool) {
	if goName != "" {
		return gt.FieldByName(goName)
	}
	for i := range gt.NumField() {
		f := gt.Field(i)
		for _, key := range []string{"json", "xml"} {
			if name, _, _ := strings.Cut(f.Tag.Get(key), ","); name == prop {
				return f, true
			}
		}
	}
	for i := range gt.NumField() {
		f := gt.Field(i)
		if f.Tag.Get("json") == "" && f.Tag.Get("xml") == "" && squash(f.Name) == squash(prop) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func squash(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

// constants reads the string constants of the Go package in dir (its test
// files aside), by their type's name: `Active UserStatus = "active"`.
func constants(dir string) (map[string][]string, error) {
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string][]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		{
			for _, decl := range file.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					typ, ok := vs.Type.(*ast.Ident)
					if !ok {
						continue
					}
					for _, v := range vs.Values {
						lit, ok := v.(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							return nil, err
						}
						out[typ.Name] = append(out[typ.Name], s)
					}
				}
			}
		}
	}
	return out, nil
}
