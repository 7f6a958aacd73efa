package restaurant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// Import writes a restaurant's configuration document: a JSON object whose
// keys are resource names (Resources) holding arrays of entities shaped as
// the restaurant API returns them (tipWithholding holds one object). Each
// entity is checked against the spec's schema, and every reference it holds
// must name an entity of the document or a live one already stored. Entities
// already stored with the same GUID are replaced; others stay as they are.
// A document with any problem is rejected whole with an *ImportError and
// changes nothing; storeerr.ErrNotFound when the restaurant does not exist.
func (s *Operator) Import(ctx context.Context, restaurantGUID string, document []byte) (ImportResult, error) {
	p, err := parseDocument(document)
	if err != nil {
		return ImportResult{}, err
	}
	problems, err := s.store.importEntities(ctx, strings.ToLower(restaurantGUID), p.entities, p.external, s.clock.Now())
	if err != nil {
		return ImportResult{}, err
	}
	if len(problems) > 0 {
		ie := &ImportError{Count: len(problems)}
		slices.Sort(problems)
		ie.Problems = problems[:min(len(problems), maxProblems)]
		return ImportResult{}, ie
	}
	total := 0
	for _, n := range p.counts {
		total += n
	}
	return ImportResult{Counts: p.counts, Total: total}, nil
}

// parsedDocument is a checked import document.
type parsedDocument struct {
	entities []storedEntity
	// external maps each reference the document does not satisfy itself to
	// the places that hold it.
	external map[entityKey][]string
	counts   map[string]int
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

// schemaSet holds, per kind, the spec schema and the property names it allows.
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
		set.schemas[k.Path] = ref.Value
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

// parseDocument decodes and checks a document, leaving the references to
// entities outside it for the store to check inside its transaction.
func parseDocument(data []byte) (*parsedDocument, error) {
	set, err := loadSchemas()
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &ImportError{Problems: []string{"the document is not a JSON object: " + err.Error()}, Count: 1}
	}
	var problems problemList
	p := &parsedDocument{external: map[entityKey][]string{}, counts: map[string]int{}}
	present := map[entityKey]bool{}
	type pendingRef struct {
		key   entityKey
		where string
	}
	var refs []pendingRef

	keys := make([]string, 0, len(top))
	for key := range top {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		k := kindByPath[key]
		if k == nil {
			problems.add("/%s: unknown resource (want one of %s)", key, strings.Join(Resources(), ", "))
			continue
		}
		var items []any
		if k.Single {
			var one any
			if err := json.Unmarshal(top[key], &one); err != nil {
				problems.add("/%s: %v", key, err)
				continue
			}
			if one != nil {
				items = []any{one}
			}
		} else if err := json.Unmarshal(top[key], &items); err != nil {
			problems.add("/%s: want an array of %s objects: %v", key, k.EntityType, err)
			continue
		}
		p.entities = slices.Grow(p.entities, len(items))
		for i, raw := range items {
			where := fmt.Sprintf("/%s/%d", key, i)
			if k.Single {
				where = "/" + key
			}
			item, ok := raw.(map[string]any)
			if !ok {
				problems.add("%s: want a %s object", where, k.EntityType)
				continue
			}
			if _, ok := item["entityType"]; !ok {
				item["entityType"] = k.EntityType
			}
			if et, _ := item["entityType"].(string); et != k.EntityType {
				problems.add("%s/entityType: want %q, got %v", where, k.EntityType, item["entityType"])
				continue
			}
			for name := range item {
				if !set.properties[k.Path][name] {
					problems.add("%s/%s: unknown field of %s", where, name, k.EntityType)
				}
			}
			if err := set.schemas[k.Path].VisitJSON(item); err != nil {
				problems.add("%s%s", where, schemaProblem(err))
				continue
			}
			guid := strings.ToLower(item["guid"].(string))
			item["guid"] = guid
			self := entityKey{Kind: k.Path, GUID: guid}
			if present[self] {
				problems.add("%s/guid: %s appears twice in %s", where, guid, key)
				continue
			}
			present[self] = true
			for _, rf := range k.Refs {
				target := &kinds[rf.Target]
				var list []any
				if rf.Many {
					list, _ = item[rf.Field].([]any)
				} else if item[rf.Field] != nil {
					list = []any{item[rf.Field]}
				}
				for j, r := range list {
					at := where + "/" + rf.Field
					if rf.Many {
						at = fmt.Sprintf("%s/%d", at, j)
					}
					ref := r.(map[string]any) // the schema checked it is an object
					if et, _ := ref["entityType"].(string); et != target.EntityType {
						problems.add("%s/entityType: a %s refers to a %s here, not a %v", at, k.EntityType, target.EntityType, ref["entityType"])
						continue
					}
					g := strings.ToLower(ref["guid"].(string))
					ref["guid"] = g
					refs = append(refs, pendingRef{key: entityKey{Kind: target.Path, GUID: g}, where: at})
				}
			}
			doc, err := json.Marshal(item)
			if err != nil {
				return nil, fmt.Errorf("encode %s: %w", where, err)
			}
			var ext *string
			if e, ok := item["externalId"].(string); ok {
				ext = &e
			}
			p.entities = append(p.entities, storedEntity{Kind: k.Path, GUID: guid, ExternalID: ext, Doc: doc})
			p.counts[k.Path]++
		}
	}
	for _, r := range refs {
		if !present[r.key] {
			p.external[r.key] = append(p.external[r.key], r.where)
		}
	}
	if problems.count > 0 {
		return nil, &ImportError{Problems: problems.list, Count: problems.count}
	}
	return p, nil
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
