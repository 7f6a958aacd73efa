package contractcoverage

import (
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"

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

// Unreachable is a declared pair no test can produce, with the reason.
type Unreachable struct {
	API         string `yaml:"api"`
	OperationID string `yaml:"operationId"`
	Status      int    `yaml:"status"`
	Reason      string `yaml:"reason"`
}

// Pair is the pair the entry excuses.
func (u Unreachable) Pair() Pair {
	return Pair{API: u.API, OperationID: u.OperationID, Status: u.Status}
}

// ReadUnreachable reads a list of unreachable pairs (testdata/contract/unreachable.yaml).
// Every entry must name a declared pair, once, with a reason.
func ReadUnreachable(path string) (map[Pair]Unreachable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("contractcoverage: %w", err)
	}
	var list []Unreachable
	if err := yaml.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("contractcoverage: %s: %w", path, err)
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
