package restaurant

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apistack/apistack/gen/restaurantserver"
)

// maxProblems caps the problems an ImportError lists; the count is exact.
const maxProblems = 50

// ImportError is the error of a configuration document that was rejected
// whole: nothing of it was written.
type ImportError struct {
	// Problems says what is wrong, each prefixed by a JSON pointer into the
	// document; at most 50 are listed.
	Problems []string
	// Count is the number of problems found.
	Count int
}

// Error implements error.
func (e *ImportError) Error() string {
	msg := fmt.Sprintf("the configuration document was rejected (%d problems): %s", e.Count, strings.Join(e.Problems, "; "))
	if e.Count > len(e.Problems) {
		msg += "; ..."
	}
	return msg
}

// ImportResult says what an import wrote.
type ImportResult struct {
	// Counts is the number of entities of the document per resource.
	Counts map[string]int
	// Total is the number of entities of the document.
	Total int
}

// problemList collects problems up to maxProblems, counting them all.
type problemList struct {
	list  []string
	count int
}

func (p *problemList) add(format string, args ...any) {
	p.count++
	if len(p.list) < maxProblems {
		p.list = append(p.list, fmt.Sprintf(format, args...))
	}
}

// schemaSet holds, per kind, the spec schema (flatSchema's copy) and the
// property names it allows.
type schemaSet struct {
	schemas    map[string]*openapi3.Schema
	properties map[string]map[string]bool
}

var loadSchemas = sync.OnceValues(func() (*schemaSet, error) {
	spec, err := restaurantserver.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("load spec: %w", err)
	}
	set := &schemaSet{schemas: map[string]*openapi3.Schema{}, properties: map[string]map[string]bool{}}
	for _, k := range kinds {
		ref := spec.Components.Schemas[k.Schema]
		if ref == nil || ref.Value == nil {
			return nil, fmt.Errorf("spec has no schema %s", k.Schema)
		}
		set.schemas[k.Path] = flatSchema(ref.Value)
		props := map[string]bool{}
		collectProperties(ref.Value, props)
		set.properties[k.Path] = props
	}
	return set, nil
})

// collectProperties gathers the property names of a schema and its allOf parts.
func collectProperties(s *openapi3.Schema, into map[string]bool) {
	for name := range s.Properties {
		into[name] = true
	}
	for _, part := range s.AllOf {
		if part.Value != nil {
			collectProperties(part.Value, into)
		}
	}
}

// schemaProblem explains a schema violation as "<pointer>: <reason>", using
// the innermost error kin-openapi reports.
func schemaProblem(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) && len(me) > 0 {
		err = me[0]
	}
	var se *openapi3.SchemaError
	if !errors.As(err, &se) {
		return ": " + err.Error()
	}
	for {
		var inner *openapi3.SchemaError
		if se.Origin == nil || !errors.As(se.Origin, &inner) {
			break
		}
		se = inner
	}
	ptr := ""
	if p := se.JSONPointer(); len(p) > 0 {
		ptr = "/" + strings.Join(p, "/")
	}
	return ptr + ": " + se.Reason
}
