package restaurant

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apistack/apistack/servers/internal/storeerr"
)

// importBatchBytes bounds what an import holds of the entities it writes at
// once (storedEntity.size): the spooled entities are read and written in
// batches of about this many bytes, each with a few statements of many rows.
const importBatchBytes = 256 << 10

// Import writes a restaurant's configuration document: a JSON object whose
// keys are resource names (Resources) holding arrays of entities shaped as
// the restaurant API returns them (tipWithholding holds one object). Each
// entity is checked against the spec's schema, and every reference it holds
// must name an entity of the document or a live one already stored. Entities
// already stored with the same GUID are replaced; others stay as they are.
// A document with any problem is rejected whole with an *ImportError and
// changes nothing; storeerr.ErrNotFound when the restaurant does not exist.
func (s *Operator) Import(ctx context.Context, restaurantGUID string, document []byte) (ImportResult, error) {
	return s.importDocument(ctx, restaurantGUID, bytes.NewReader(document), false)
}

// ImportFrom is Import reading the document from r as it goes, in two
// passes whose memory does not grow with the document. The first decodes
// and checks it entity by entity, with no transaction open, and spools the
// checked entities to a temporary file: a client that sends its document
// slowly holds no lock of the database meanwhile. The second, once the
// whole document is read and found well formed, writes the spooled entities
// in batches inside one transaction, staging their GUIDs and references in
// tables of that transaction: the database refuses a GUID written twice
// (a duplicate of the document), and one join finds the references that
// name no live entity. An error of r itself (a body over its limit) is
// returned wrapped, not as an *ImportError.
func (s *Operator) ImportFrom(ctx context.Context, restaurantGUID string, r io.Reader) (ImportResult, error) {
	return s.importDocument(ctx, restaurantGUID, r, true)
}

// importDocument is Import and ImportFrom: spoolOnDisk says whether the
// checked entities are spooled to a temporary file (a document read from a
// stream) or kept in memory (a document held in memory already).
func (s *Operator) importDocument(ctx context.Context, restaurantGUID string, r io.Reader, spoolOnDisk bool) (ImportResult, error) {
	set, err := loadSchemas()
	if err != nil {
		return ImportResult{}, err
	}
	sp, err := newImportSpool(spoolOnDisk)
	if err != nil {
		return ImportResult{}, err
	}
	defer sp.close()
	im := &importer{set: set, spool: sp, counts: map[string]int{}, seen: map[string]bool{}}
	if err := im.read(r); err != nil {
		return ImportResult{}, err
	}
	if ie := im.problems.importError(); ie != nil {
		return ImportResult{}, ie
	}
	guid := strings.ToLower(restaurantGUID)
	if err := s.writeSpooled(ctx, guid, sp); err != nil {
		return ImportResult{}, err
	}
	total := 0
	for _, n := range im.counts {
		total += n
	}
	return ImportResult{Counts: im.counts, Total: total}, nil
}

// writeSpooled writes the entities of a spool into the restaurant in one
// transaction, and commits it unless the document holds a GUID twice or a
// reference to no live entity (an *ImportError).
func (s *Operator) writeSpooled(ctx context.Context, restaurantGUID string, sp *importSpool) error {
	rd, err := sp.reader()
	if err != nil {
		return err
	}
	tx, err := s.store.beginImport(ctx, restaurantGUID, s.clock.Now())
	if err != nil {
		return err
	}
	defer tx.rollback()
	if !tx.found {
		return fmt.Errorf("restaurant %s: %w", restaurantGUID, storeerr.ErrNotFound)
	}
	var problems problemList
	var batch []storedEntity
	batchBytes := 0
	for {
		// The batch's entities are reused, their slices with them.
		if len(batch) < cap(batch) {
			batch = batch[:len(batch)+1]
		} else {
			batch = append(batch, storedEntity{})
		}
		more := rd.next(&batch[len(batch)-1])
		if !more {
			batch = batch[:len(batch)-1]
		} else {
			batchBytes += batch[len(batch)-1].size()
		}
		if len(batch) > 0 && (!more || batchBytes >= importBatchBytes) {
			if err := tx.write(ctx, batch, &problems); err != nil {
				return err
			}
			batch, batchBytes = batch[:0], 0
		}
		if !more {
			break
		}
	}
	if rd.err != nil {
		return rd.err
	}
	if err := tx.dangling(ctx, &problems); err != nil {
		return err
	}
	if problems.count > 0 {
		return &ImportError{Problems: problems.list, Count: problems.count}
	}
	return tx.commit(ctx)
}

// importer reads one import document, checks its entities and spools them.
type importer struct {
	set    *schemaSet
	spool  *importSpool
	counts map[string]int
	// problems holds the problems found, listed in the order of their
	// top-level keys, sorted, as a whole document decoded into a map lists
	// them.
	problems keyedProblems
	// seen holds the resources read.
	seen map[string]bool
	// current is the entity being spooled, its slices reused.
	current storedEntity
}

// add records a problem found under the top-level key.
func (im *importer) add(key, format string, args ...any) {
	im.problems.add(key, fmt.Sprintf(format, args...))
}

// keyedProblem is a problem found under a top-level key, the seq'th found.
type keyedProblem struct {
	key string
	seq int
	msg string
}

// keyedProblems collects the problems of a document, counting them all and
// keeping the first maxProblems in the order of their top-level keys
// (sorted) and then of the document: it never holds more than twice as
// many, whatever the number of keys and problems.
type keyedProblems struct {
	kept  []keyedProblem
	count int
}

func (p *keyedProblems) add(key, msg string) {
	p.kept = append(p.kept, keyedProblem{key: key, seq: p.count, msg: msg})
	p.count++
	if len(p.kept) >= 2*maxProblems {
		p.trim()
	}
}

// trim keeps the first maxProblems problems.
func (p *keyedProblems) trim() {
	slices.SortFunc(p.kept, func(a, b keyedProblem) int {
		return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.seq, b.seq))
	})
	clear(p.kept[min(len(p.kept), maxProblems):])
	p.kept = p.kept[:min(len(p.kept), maxProblems)]
}

// importError returns the problems as an *ImportError, or nil when there
// are none.
func (p *keyedProblems) importError() *ImportError {
	if p.count == 0 {
		return nil
	}
	p.trim()
	ie := &ImportError{Count: p.count}
	for _, k := range p.kept {
		ie.Problems = append(ie.Problems, k.msg)
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
func (im *importer) read(r io.Reader) error {
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
		if err := im.value(dec, key); err != nil {
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
func (im *importer) value(dec *json.Decoder, key string) error {
	k := kindByPath[key]
	switch {
	case im.seen[key]:
		im.add(key, "/%s: appears more than once in the document", key)
		k = nil
	case k == nil:
		im.add(key, "/%s: unknown resource (want one of %s)", key, strings.Join(Resources(), ", "))
	}
	if k != nil {
		im.seen[key] = true // only resources: the map's size is bounded
	}
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
			return im.entity(k, key, "/"+key, one)
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
		if err := im.entity(k, key, fmt.Sprintf("/%s/%d", key, i), raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntaxProblem(err)
	}
	return nil
}

// entity checks one entity of the document, at where under the top-level
// key, and spools it to be written.
func (im *importer) entity(k *kind, key, where string, raw any) error {
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
	e := &im.current
	e.Kind, e.GUID, e.At, e.Refs = k.Path, guid, where, e.Refs[:0]
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
			e.Refs = append(e.Refs, storedRef{Kind: target.Path, GUID: g, At: at})
		}
	}
	im.counts[k.Path]++
	if im.problems.count > 0 {
		return nil // the document is refused: nothing more is spooled
	}
	doc, err := json.Marshal(item)
	if err != nil {
		return fmt.Errorf("encode %s: %w", where, err)
	}
	e.Doc, e.ExternalID = doc, nil
	if ext, ok := item["externalId"].(string); ok {
		e.ExternalID = &ext
	}
	return im.spool.put(e)
}
