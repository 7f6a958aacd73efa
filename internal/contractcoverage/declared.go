package contractcoverage

import (
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/apistack/apistack/specs"
)

// APIs maps each API of the coverage record to its spec in specs.FS.
var APIs = map[string]string{
	"pam":         "pam/openapi.yaml",
	"fax":         "fax/openapi.yaml",
	"faxwebhooks": "fax/webhooks.yaml",
	"storage":     "storage/openapi.yaml",
	"restaurant":  "restaurant/openapi.yaml",
	"admin":       "admin/openapi.yaml",
	"sandbox":     "sandbox/openapi.yaml",
}

// Declared returns every (operation, status) pair the spec of api declares,
// sorted. A "default" response names no status and is not a pair.
func Declared(api string) ([]Pair, error) {
	path, ok := APIs[api]
	if !ok {
		return nil, fmt.Errorf("contractcoverage: unknown API %q", api)
	}
	data, err := fs.ReadFile(specs.FS, path)
	if err != nil {
		return nil, fmt.Errorf("contractcoverage: %w", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("contractcoverage: load %s: %w", path, err)
	}
	var pairs []Pair
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil {
					continue // "default", or a range such as "5XX"
				}
				pairs = append(pairs, Pair{API: api, OperationID: op.OperationID, Status: status})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].String() < pairs[j].String() })
	return pairs, nil
}

// Unreachable is a declared pair, or a declared field of one (Pointer set),
// that no test can produce, with the reason.
type Unreachable struct {
	API         string `yaml:"api"`
	OperationID string `yaml:"operationId"`
	Status      int    `yaml:"status"`
	// Pointer names a field of the pair's response (see Field); empty for
	// the pair itself.
	Pointer string `yaml:"pointer,omitempty"`
	Reason  string `yaml:"reason"`
}

// Pair is the pair the entry excuses.
func (u Unreachable) Pair() Pair {
	return Pair{API: u.API, OperationID: u.OperationID, Status: u.Status}
}

// Field is the field the entry excuses (Pointer set).
func (u Unreachable) Field() Field {
	return Field{API: u.API, OperationID: u.OperationID, Status: u.Status, Pointer: u.Pointer}
}

func readList(path string) ([]Unreachable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("contractcoverage: %w", err)
	}
	var list []Unreachable
	if err := yaml.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("contractcoverage: %s: %w", path, err)
	}
	return list, nil
}

// FieldList is the field entries of a list of unreachable (or untested)
// pairs. An entry names one field, or, with operationId "*", that field of
// every operation of the API answering with the entry's status. An entry
// names every field beneath its pointer too (a property never present has
// nothing present beneath it); a pointer to the elements of an array or the
// values of a map ("/errors/*") names every field of them.
type FieldList struct {
	path    string
	entries []Unreachable
	// matched holds, per entry, the declared fields it names.
	matched [][]Field
}

// Excuse returns the entry that names f.
func (l *FieldList) Excuse(f Field) (Unreachable, bool) {
	for _, u := range l.entries {
		if u.matches(f) {
			return u, true
		}
	}
	return Unreachable{}, false
}

// Entries returns the entries with the declared fields each names.
func (l *FieldList) Entries() ([]Unreachable, [][]Field) { return l.entries, l.matched }

func (u Unreachable) matches(f Field) bool {
	if u.API != f.API || u.Status != f.Status || (u.OperationID != "*" && u.OperationID != f.OperationID) {
		return false
	}
	return u.Pointer == f.Pointer || strings.HasPrefix(f.Pointer, u.Pointer+"/")
}

// ReadUnreachableFields reads the entries of a list of unreachable pairs
// that name fields (a pointer). Every one must name at least one declared
// field, be listed once, and give a reason.
func ReadUnreachableFields(path string) (*FieldList, error) {
	list, err := readList(path)
	if err != nil {
		return nil, err
	}
	var declared []Field
	for api := range APIs {
		fields, err := DeclaredFields(api)
		if err != nil {
			return nil, err
		}
		declared = append(declared, fields...)
	}
	out := &FieldList{path: path}
	seen := map[Field]bool{}
	for _, u := range list {
		if u.Pointer == "" {
			continue
		}
		f := u.Field()
		if u.Reason == "" {
			return nil, fmt.Errorf("contractcoverage: %s: %s has no reason", path, f)
		}
		if seen[f] {
			return nil, fmt.Errorf("contractcoverage: %s: %s is listed twice", path, f)
		}
		seen[f] = true
		var matched []Field
		for _, d := range declared {
			if u.matches(d) {
				matched = append(matched, d)
			}
		}
		if len(matched) == 0 {
			return nil, fmt.Errorf("contractcoverage: %s: %s names no field its spec declares", path, f)
		}
		out.entries = append(out.entries, u)
		out.matched = append(out.matched, matched)
	}
	return out, nil
}

// ReadUnreachable reads a list of unreachable pairs (testdata/contract/unreachable.yaml).
// Every entry must name a declared pair, once, with a reason; entries that
// name a field are ReadUnreachableFields'.
func ReadUnreachable(path string) (map[Pair]Unreachable, error) {
	list, err := readList(path)
	if err != nil {
		return nil, err
	}
	declared := map[Pair]bool{}
	for api := range APIs {
		pairs, err := Declared(api)
		if err != nil {
			return nil, err
		}
		for _, p := range pairs {
			declared[p] = true
		}
	}
	out := map[Pair]Unreachable{}
	for _, u := range list {
		if u.Pointer != "" {
			continue
		}
		p := u.Pair()
		switch {
		case u.Reason == "":
			return nil, fmt.Errorf("contractcoverage: %s: %s has no reason", path, p)
		case !declared[p]:
			return nil, fmt.Errorf("contractcoverage: %s: %s is not declared by its spec", path, p)
		}
		if _, dup := out[p]; dup {
			return nil, fmt.Errorf("contractcoverage: %s: %s is listed twice", path, p)
		}
		out[p] = u
	}
	return out, nil
}
