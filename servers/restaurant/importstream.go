package restaurant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/internal/storeerr"
)

// importBatchBytes bounds the entity documents an import holds before it
// writes them: once a batch's documents reach this many bytes they are
// written (inside the import's one transaction) and dropped.
const importBatchBytes = 1 << 20

// Import writes a restaurant's configuration document: a JSON object whose
// keys are resource names (Resources) holding arrays of entities shaped as
// the restaurant API returns them (tipWithholding holds one object). Each
// entity is checked against the spec's schema, and every reference it holds
// must name an entity of the document or a live one already stored. Entities
// already stored with the same GUID are replaced; others stay as they are.
// A document with any problem is rejected whole with an *ImportError and
// changes nothing; storeerr.ErrNotFound when the restaurant does not exist.
func (s *Operator) Import(ctx context.Context, restaurantGUID string, document []byte) (ImportResult, error) {
	return s.ImportFrom(ctx, restaurantGUID, bytes.NewReader(document))
}

// ImportFrom is Import reading the document from r as it goes: entity by
// entity, each checked as it comes and written in batches inside one
// transaction, so what the import holds does not grow with the size of the
// document's entities (only their GUIDs and references are kept, to check
// them once the whole document is read). An error of r itself (a body over
// its limit) is returned wrapped, not as an *ImportError.
func (s *Operator) ImportFrom(ctx context.Context, restaurantGUID string, r io.Reader) (ImportResult, error) {
	set, err := loadSchemas()
	if err != nil {
		return ImportResult{}, err
	}
	im := &importer{
		set: set, store: s.store, restaurantGUID: strings.ToLower(restaurantGUID), now: s.clock.Now(),
		present: map[entityKey]bool{}, counts: map[string]int{}, problems: map[string]*problemList{}, seen: map[string]bool{},
	}
	defer im.rollback()
	if err := im.read(ctx, r); err != nil {
		return ImportResult{}, err
	}
	if ie := im.problemsError(); ie != nil {
		return ImportResult{}, ie
	}
	if err := im.flush(ctx); err != nil {
		return ImportResult{}, err
	}
	if !im.tx.found {
		return ImportResult{}, fmt.Errorf("restaurant %s: %w", im.restaurantGUID, storeerr.ErrNotFound)
	}
	external := map[entityKey][]string{}
	for _, r := range im.refs {
		if !im.present[r.key] {
			external[r.key] = append(external[r.key], r.where)
		}
	}
	problems, err := im.tx.missing(ctx, external)
	if err != nil {
		return ImportResult{}, err
	}
	if len(problems) > 0 {
		ie := &ImportError{Count: len(problems)}
		slices.Sort(problems)
		ie.Problems = problems[:min(len(problems), maxProblems)]
		return ImportResult{}, ie
	}
	if err := im.tx.commit(); err != nil {
		return ImportResult{}, err
	}
	im.tx = nil
	total := 0
	for _, n := range im.counts {
		total += n
	}
	return ImportResult{Counts: im.counts, Total: total}, nil
}

// pendingRef is a reference of the document, checked once all of it is read.
type pendingRef struct {
	key   entityKey
	where string
}

// importer reads one import document and writes its entities.
type importer struct {
	set            *schemaSet
	store          *store
	restaurantGUID string
	now            time.Time
	// tx is the import's transaction, begun when the first batch is
	// written (or at the end).
	tx *importTx
	// batch holds the checked entities not yet written, batchBytes the size
	// of their documents.
	batch      []storedEntity
	batchBytes int
	present    map[entityKey]bool
	refs       []pendingRef
	counts     map[string]int
	// problems holds the problems found, per top-level key: they are
	// listed in the order of the keys, sorted, as a whole document decoded
	// into a map lists them.
	problems map[string]*problemList
	// seen holds the top-level keys read.
	seen map[string]bool
}

// add records a problem found under the top-level key.
func (im *importer) add(key, format string, args ...any) {
	p := im.problems[key]
	if p == nil {
		p = &problemList{}
		im.problems[key] = p
	}
	p.add(format, args...)
}

// problemsError returns the document's problems as an *ImportError, or nil
// when it has none.
func (im *importer) problemsError() *ImportError {
	ie := &ImportError{}
	for _, k := range slices.Sorted(maps.Keys(im.problems)) {
		p := im.problems[k]
		ie.Count += p.count
		for _, msg := range p.list {
			if len(ie.Problems) < maxProblems {
				ie.Problems = append(ie.Problems, msg)
			}
		}
	}
	if ie.Count == 0 {
		return nil
	}
	return ie
}

// notJSON is the problem of a document that is not a JSON object.
func notJSON(err error) *ImportError {
	return &ImportError{Problems: []string{"the document is not a JSON object: " + err.Error()}, Count: 1}
}

// syntaxProblem classifies an error of the decoder: the document's own (bad
// JSON, cut short) as an *ImportError, anything else (the reader's) wrapped
// as it is.
func syntaxProblem(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return notJSON(err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return notJSON(errors.New("unexpected end of JSON input"))
	}
	return fmt.Errorf("read the configuration document: %w", err)
}

// wrongShape returns the error json.Unmarshal gives for a value whose first
// token is tok decoded into into.
func wrongShape(tok json.Token, into any) error {
	sample := []byte("{}")
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			sample = []byte("[]")
		}
	default:
		sample, _ = json.Marshal(t)
	}
	return json.Unmarshal(sample, into)
}

// skipRest reads past the rest of a value whose first token was tok.
func skipRest(dec *json.Decoder, tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || (d != '{' && d != '[') {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// read decodes the document from r, checking and queueing its entities.
func (im *importer) read(ctx context.Context, r io.Reader) error {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return syntaxProblem(err)
	}
	if tok == nil {
		return im.end(dec)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		var top map[string]json.RawMessage
		return notJSON(wrongShape(tok, &top))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxProblem(err)
		}
		key, _ := tok.(string) // the decoder only gives an object strings for keys
		if err := im.value(ctx, dec, key); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntaxProblem(err)
	}
	return im.end(dec)
}

// end checks that nothing but white space follows the document.
func (im *importer) end(dec *json.Decoder) error {
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return syntaxProblem(err)
		}
		return notJSON(errors.New("invalid character after top-level value"))
	}
	return nil
}

// value reads the value of the top-level key.
func (im *importer) value(ctx context.Context, dec *json.Decoder, key string) error {
	k := kindByPath[key]
	switch {
	case im.seen[key]:
		im.add(key, "/%s: appears more than once in the document", key)
		k = nil
	case k == nil:
		im.add(key, "/%s: unknown resource (want one of %s)", key, strings.Join(Resources(), ", "))
	}
	im.seen[key] = true
	if k == nil {
		tok, err := dec.Token()
		if err == nil {
			err = skipRest(dec, tok)
		}
		if err != nil {
			return syntaxProblem(err)
		}
		return nil
	}
	if k.Single {
		var one any
		if err := dec.Decode(&one); err != nil {
			return syntaxProblem(err)
		}
		if one != nil {
			return im.entity(ctx, k, key, "/"+key, one)
		}
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return syntaxProblem(err)
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		var items []any
		im.add(key, "/%s: want an array of %s objects: %v", key, k.EntityType, wrongShape(tok, &items))
		if err := skipRest(dec, tok); err != nil {
			return syntaxProblem(err)
		}
		return nil
	}
	for i := 0; dec.More(); i++ {
		var raw any
		if err := dec.Decode(&raw); err != nil {
			return syntaxProblem(err)
		}
		if err := im.entity(ctx, k, key, fmt.Sprintf("/%s/%d", key, i), raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntaxProblem(err)
	}
	return nil
}

// entity checks one entity of the document, at where under the top-level
// key, and queues it to be written.
func (im *importer) entity(ctx context.Context, k *kind, key, where string, raw any) error {
	set := im.set
	item, ok := raw.(map[string]any)
	if !ok {
		im.add(key, "%s: want a %s object", where, k.EntityType)
		return nil
	}
	if _, ok := item["entityType"]; !ok {
		item["entityType"] = k.EntityType
	}
	if et, _ := item["entityType"].(string); et != k.EntityType {
		im.add(key, "%s/entityType: want %q, got %v", where, k.EntityType, item["entityType"])
		return nil
	}
	for name := range item {
		if !set.properties[k.Path][name] {
			im.add(key, "%s/%s: unknown field of %s", where, name, k.EntityType)
		}
	}
	if err := set.schemas[k.Path].VisitJSON(item); err != nil {
		im.add(key, "%s%s", where, schemaProblem(err))
		return nil
	}
	guid := strings.ToLower(item["guid"].(string))
	item["guid"] = guid
	self := entityKey{Kind: k.Path, GUID: guid}
	if im.present[self] {
		im.add(key, "%s/guid: %s appears twice in %s", where, guid, key)
		return nil
	}
	im.present[self] = true
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
				im.add(key, "%s/entityType: a %s refers to a %s here, not a %v", at, k.EntityType, target.EntityType, ref["entityType"])
				continue
			}
			g := strings.ToLower(ref["guid"].(string))
			ref["guid"] = g
			im.refs = append(im.refs, pendingRef{key: entityKey{Kind: target.Path, GUID: g}, where: at})
		}
	}
	im.counts[k.Path]++
	if len(im.problems) > 0 {
		return nil // the document is refused: nothing more is queued
	}
	doc, err := json.Marshal(item)
	if err != nil {
		return fmt.Errorf("encode %s: %w", where, err)
	}
	var ext *string
	if e, ok := item["externalId"].(string); ok {
		ext = &e
	}
	im.batch = append(im.batch, storedEntity{Kind: k.Path, GUID: guid, ExternalID: ext, Doc: doc})
	im.batchBytes += len(doc)
	if im.batchBytes >= importBatchBytes {
		return im.flush(ctx)
	}
	return nil
}

// flush writes the queued entities, beginning the import's transaction
// first when it is not begun yet. Nothing is written into a restaurant that
// does not exist, or once the document has a problem.
func (im *importer) flush(ctx context.Context) error {
	if im.tx == nil {
		tx, err := im.store.beginImport(ctx, im.restaurantGUID, im.now)
		if err != nil {
			return err
		}
		im.tx = tx
	}
	batch := im.batch
	im.batch, im.batchBytes = im.batch[:0], 0
	var err error
	if im.tx.found && len(im.problems) == 0 {
		err = im.tx.write(ctx, batch)
	}
	clear(batch)
	return err
}

// rollback drops what the import wrote unless it committed.
func (im *importer) rollback() {
	if im.tx != nil {
		im.tx.rollback()
	}
}
