package contractcoverage

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apistack/apistack/specs"
)

// Operation is one operation of an API's spec.
type Operation struct {
	// ID is the operationId.
	ID string
	// Method and Path are as the spec writes them (Path with {params}).
	Method, Path string
	// Op is the operation itself.
	Op *openapi3.Operation
	// Server is the path prefix of the spec's first server ("/config/v2").
	Server string
	// Shared are the parameters of the path item, for every operation on it.
	Shared openapi3.Parameters
}

// Declares reports whether the operation declares a response with status.
func (o Operation) Declares(status int) bool {
	return o.Op.Responses.Value(strconv.Itoa(status)) != nil
}

// Secured reports whether the operation requires credentials.
func (o Operation) Secured(doc *openapi3.T) bool {
	if o.Op.Security != nil {
		return len(*o.Op.Security) > 0
	}
	return len(doc.Security) > 0
}

// Operations returns the spec of api and every operation in it, sorted by
// operationId, for tests that sweep a condition (no credentials, a broken
// database) across every operation.
func Operations(api string) (*openapi3.T, []Operation, error) {
	path, ok := APIs[api]
	if !ok {
		return nil, nil, fmt.Errorf("contractcoverage: unknown API %q", api)
	}
	data, err := fs.ReadFile(specs.FS, path)
	if err != nil {
		return nil, nil, fmt.Errorf("contractcoverage: %w", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, nil, fmt.Errorf("contractcoverage: load %s: %w", path, err)
	}
	prefix := ""
	if len(doc.Servers) > 0 {
		if u, err := url.Parse(doc.Servers[0].URL); err == nil {
			prefix = strings.TrimSuffix(u.Path, "/")
		}
	}
	var ops []Operation
	for p, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops = append(ops, Operation{ID: op.OperationID, Method: method, Path: p, Op: op, Server: prefix, Shared: item.Parameters})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].ID < ops[j].ID })
	return doc, ops, nil
}

// NewRequest builds a well-formed request for o at base: path and required
// query and header parameters from values when named there, else a sample
// valid for their schema; a required JSON body is body, or "{}".
func (o Operation) NewRequest(base string, values map[string]string, body string) (*http.Request, error) {
	p := o.Path
	query := url.Values{}
	header := http.Header{}
	for _, ref := range append(append(openapi3.Parameters{}, o.Shared...), o.Op.Parameters...) {
		prm := ref.Value
		v, ok := values[prm.Name]
		if !ok {
			if !prm.Required {
				continue
			}
			v = sample(prm.Schema)
		}
		switch prm.In {
		case openapi3.ParameterInPath:
			p = strings.ReplaceAll(p, "{"+prm.Name+"}", url.PathEscape(v))
		case openapi3.ParameterInQuery:
			query.Set(prm.Name, v)
		case openapi3.ParameterInHeader:
			header.Set(prm.Name, v)
		}
	}
	u := strings.TrimSuffix(base, "/") + o.Server + p
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var reader *bytes.Reader
	rb := o.Op.RequestBody
	if rb != nil && rb.Value != nil && (rb.Value.Required || body != "") {
		if body == "" {
			body = "{}"
		}
		reader = bytes.NewReader([]byte(body))
		header.Set("Content-Type", "application/json")
	}
	var req *http.Request
	var err error
	if reader != nil {
		req, err = http.NewRequest(o.Method, u, reader)
	} else {
		req, err = http.NewRequest(o.Method, u, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("contractcoverage: %s: %w", o.ID, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	return req, nil
}

// sample is a value valid for the simple schemas of path, query and header
// parameters.
func sample(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil {
		return "x"
	}
	s := ref.Value
	switch {
	case len(s.Enum) > 0:
		return fmt.Sprint(s.Enum[0])
	case s.Example != nil:
		return fmt.Sprint(s.Example)
	case s.Format == "uuid":
		return "00000000-0000-4000-8000-000000000001"
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		if s.Min != nil {
			return strconv.FormatFloat(*s.Min, 'f', -1, 64)
		}
		return "1"
	case s.Type.Is(openapi3.TypeBoolean):
		return "true"
	}
	return "x"
}
