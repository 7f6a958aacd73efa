package validation

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// fastChecks holds, by operation, the compiled check of the requests without
// a body (the reads): the operation's security, then each parameter's value
// against a schema of the few keywords the read parameters use (a type, a
// length, a pattern, an enumeration, bounds, a default). The check only ever
// admits: a request it is not sure openapi3filter admits (a value it does
// not check itself, one that breaks the schema, a failed authentication, a
// repeated or empty parameter) is checked by openapi3filter as before, so a
// refused request gets the same failure, word for word. What it admits,
// openapi3filter admits too, with the same effect on the request: the
// defaults of absent query parameters are written into the query as
// openapi3filter writes them.
type fastChecks map[*openapi3.Operation]*fastCheck

// fastCheck is one operation's compiled check.
type fastCheck struct {
	// security is the operation's requirements (or the spec's), each with
	// its schemes in the order openapi3filter calls them; nil: none.
	security [][]fastScheme
	params   []fastParam
}

// fastScheme is one security scheme of a requirement.
type fastScheme struct {
	name   string
	scheme *openapi3.SecurityScheme
	scopes []string
}

// fastParam is one parameter's compiled check.
type fastParam struct {
	in, name string // name: canonical for a header
	required bool
	// unchecked: the parameter has no schema; openapi3filter checks nothing.
	unchecked bool
	// other: its schema has keywords the check does not take; a request
	// that gives it goes to openapi3filter.
	other bool
	typ   string // "string", "integer" or "boolean"
	// string
	minLength uint64
	maxLength *uint64
	pattern   *regexp.Regexp
	enum      []string
	// integer
	min, max *float64
	int32    bool
	// def is the default written into the query when the parameter is
	// absent (hasDefault), as openapi3filter writes it.
	def        string
	hasDefault bool
}

// compileFastChecks compiles the check of every operation of spec that
// takes no body and whose parameters it can check.
func compileFastChecks(spec *openapi3.T) fastChecks {
	out := fastChecks{}
	if spec.Paths == nil {
		return out
	}
	for _, pathItem := range spec.Paths.Map() {
		for _, op := range pathItem.Operations() {
			if fc := compileFastCheck(spec, pathItem, op); fc != nil {
				out[op] = fc
			}
		}
	}
	return out
}

func compileFastCheck(spec *openapi3.T, pathItem *openapi3.PathItem, op *openapi3.Operation) *fastCheck {
	if op.RequestBody != nil {
		return nil
	}
	fc := &fastCheck{}
	security := op.Security
	if security == nil {
		security = &spec.Security
	}
	for _, req := range *security {
		names := make([]string, 0, len(req))
		for name := range req {
			names = append(names, name)
		}
		slices.Sort(names)
		schemes := make([]fastScheme, 0, len(names))
		for _, name := range names {
			var scheme *openapi3.SecurityScheme
			if spec.Components != nil {
				if ref := spec.Components.SecuritySchemes[name]; ref != nil {
					scheme = ref.Value
				}
			}
			if scheme == nil {
				return nil // openapi3filter refuses it: let it
			}
			schemes = append(schemes, fastScheme{name: name, scheme: scheme, scopes: req[name]})
		}
		fc.security = append(fc.security, schemes)
	}
	var params []*openapi3.Parameter
	for _, ref := range pathItem.Parameters {
		if op.Parameters != nil && op.Parameters.GetByInAndName(ref.Value.In, ref.Value.Name) != nil {
			continue
		}
		params = append(params, ref.Value)
	}
	for _, ref := range op.Parameters {
		params = append(params, ref.Value)
	}
	for _, prm := range params {
		fp, ok := compileFastParam(spec, prm)
		if !ok {
			return nil
		}
		fc.params = append(fc.params, fp)
	}
	return fc
}

// defaultStyles are the serializations a parameter has when its spec says
// none, the only ones the check reads.
var defaultStyles = map[string]openapi3.SerializationMethod{
	openapi3.ParameterInPath:   {Style: openapi3.SerializationSimple, Explode: false},
	openapi3.ParameterInQuery:  {Style: openapi3.SerializationForm, Explode: true},
	openapi3.ParameterInHeader: {Style: openapi3.SerializationSimple, Explode: false},
}

// compileFastParam compiles one parameter; ok is false when the operation
// is better left to openapi3filter altogether (a default the check cannot
// write exactly, a parameter in a cookie).
func compileFastParam(spec *openapi3.T, prm *openapi3.Parameter) (fastParam, bool) {
	fp := fastParam{in: prm.In, name: prm.Name, required: prm.Required}
	style, known := defaultStyles[prm.In]
	if !known {
		return fp, false
	}
	if prm.In == openapi3.ParameterInHeader {
		fp.name = http.CanonicalHeaderKey(prm.Name)
	}
	if prm.Schema == nil && prm.Content == nil {
		fp.unchecked = true
		return fp, true
	}
	sm, err := prm.SerializationMethod()
	if prm.Content != nil || prm.Schema == nil || prm.Schema.Value == nil || err != nil || *sm != style ||
		spec.IsOpenAPI31OrLater() {
		fp.other = true
		return fp, true
	}
	s := prm.Schema.Value
	if !compileFastSchema(&fp, s) {
		fp.other = true
	}
	if s.Default != nil || slices.ContainsFunc(s.AllOf, func(r *openapi3.SchemaRef) bool { return r.Value != nil && r.Value.Default != nil }) {
		// openapi3filter writes a default in: the check writes it the same
		// way, for a query parameter whose schema it knows, and checks the
		// default against that schema once, here.
		if fp.other || prm.In != openapi3.ParameterInQuery || s.Default == nil {
			return fp, false
		}
		if err := s.VisitJSON(s.Default); err != nil {
			return fp, false
		}
		fp.def, fp.hasDefault = fmt.Sprint(s.Default), true
	}
	return fp, true
}

// compileFastSchema fills fp from a schema of only the keywords it knows;
// it is false for any other schema.
func compileFastSchema(fp *fastParam, s *openapi3.Schema) bool {
	rest := *s
	rest.Extensions, rest.Origin = nil, nil
	rest.Title, rest.Description, rest.Example, rest.Examples, rest.ExternalDocs, rest.Deprecated, rest.Comment = "", "", nil, nil, nil, false, ""
	rest.Type, rest.Format, rest.Default = nil, "", nil
	rest.Enum, rest.MinLength, rest.MaxLength, rest.Pattern, rest.Min, rest.Max = nil, 0, nil, "", nil, nil
	if !reflect.DeepEqual(rest, openapi3.Schema{}) || s.Type == nil || len(s.Type.Slice()) != 1 {
		return false
	}
	fp.typ = s.Type.Slice()[0]
	switch fp.typ {
	case openapi3.TypeString:
		if s.Format != "" || s.Min != nil || s.Max != nil || strings.Contains(s.Pattern, `\u`) {
			return false
		}
		fp.minLength, fp.maxLength = s.MinLength, s.MaxLength
		if s.Pattern != "" {
			re, err := regexp.Compile(s.Pattern)
			if err != nil {
				return false
			}
			fp.pattern = re
		}
		for _, v := range s.Enum {
			str, ok := v.(string)
			if !ok {
				return false
			}
			fp.enum = append(fp.enum, str)
		}
		if s.Enum != nil && fp.enum == nil {
			return false
		}
	case openapi3.TypeInteger:
		if (s.Format != "" && s.Format != "int32" && s.Format != "int64") || s.Enum != nil ||
			s.MinLength != 0 || s.MaxLength != nil || s.Pattern != "" {
			return false
		}
		fp.min, fp.max, fp.int32 = s.Min, s.Max, s.Format == "int32"
	case openapi3.TypeBoolean:
		if s.Format != "" || s.Enum != nil || s.Min != nil || s.Max != nil ||
			s.MinLength != 0 || s.MaxLength != nil || s.Pattern != "" {
			return false
		}
	default:
		return false
	}
	return true
}

// admit checks req (routed to route, with pathParams) and returns its
// validation input when openapi3filter is sure to admit it as it is; ok is
// false when openapi3filter must check it.
func (fc *fastCheck) admit(req *http.Request, route *routers.Route, pathParams map[string]string,
	opts *openapi3filter.Options) (input *openapi3filter.RequestValidationInput, ok bool) {
	if req.ContentLength != 0 || (req.Body != nil && req.Body != http.NoBody) {
		return nil, false
	}
	var query url.Values
	if req.URL.RawQuery != "" {
		q, err := url.ParseQuery(req.URL.RawQuery)
		if err != nil {
			return nil, false
		}
		query = q
	}
	var defaults []*fastParam
	for i := range fc.params {
		fp := &fc.params[i]
		if fp.unchecked {
			continue
		}
		var raw string
		switch fp.in {
		case openapi3.ParameterInPath:
			v, found := pathParams[fp.name]
			if !found || v == "" {
				return nil, false
			}
			raw = v
		case openapi3.ParameterInQuery:
			values, found := query[fp.name]
			if !found {
				if fp.required {
					return nil, false
				}
				if fp.hasDefault {
					defaults = append(defaults, fp)
				}
				continue
			}
			if len(values) != 1 || values[0] == "" {
				return nil, false
			}
			raw = values[0]
		case openapi3.ParameterInHeader:
			values, found := req.Header[fp.name]
			if !found {
				if fp.required {
					return nil, false
				}
				continue
			}
			if len(values) != 1 || values[0] == "" {
				return nil, false
			}
			raw = values[0]
		default:
			return nil, false
		}
		if fp.other || !fp.valid(raw) {
			return nil, false
		}
	}
	input = &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route, Options: opts, QueryParams: query}
	if !fc.authenticated(req, input, opts.AuthenticationFunc) {
		return nil, false
	}
	if len(defaults) > 0 {
		if query == nil {
			query = url.Values{}
		}
		written := make(url.Values, len(query)+len(defaults))
		for k, v := range query {
			written[k] = v
		}
		for _, fp := range defaults {
			written[fp.name] = []string{fp.def}
		}
		req.URL.RawQuery = written.Encode()
	}
	return input, true
}

// authenticated reports whether one of the security requirements is met,
// calling authenticate as openapi3filter does.
func (fc *fastCheck) authenticated(req *http.Request, input *openapi3filter.RequestValidationInput, authenticate openapi3filter.AuthenticationFunc) bool {
	if len(fc.security) == 0 {
		return true
	}
	if authenticate == nil {
		return false
	}
	for _, schemes := range fc.security {
		met := true
		for _, s := range schemes {
			if err := authenticate(req.Context(), &openapi3filter.AuthenticationInput{
				RequestValidationInput: input, SecuritySchemeName: s.name, SecurityScheme: s.scheme, Scopes: s.scopes,
			}); err != nil {
				met = false
				break
			}
		}
		if met {
			return true
		}
	}
	return false
}

// valid reports whether raw, a parameter's value as sent, is sure to pass
// openapi3filter's check of the parameter.
func (fp *fastParam) valid(raw string) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] < 0x20 || raw[i] > 0x7e {
			return false // lengths then count bytes, as openapi3filter counts characters
		}
	}
	switch fp.typ {
	case openapi3.TypeString:
		n := uint64(len(raw))
		if n < fp.minLength || (fp.maxLength != nil && n > *fp.maxLength) {
			return false
		}
		if fp.pattern != nil && !fp.pattern.MatchString(raw) {
			return false
		}
		return fp.enum == nil || slices.Contains(fp.enum, raw)
	case openapi3.TypeInteger:
		// Canonical decimal digits only, few enough to be exact as a
		// float64, the type the schema's bounds are checked in.
		digits := strings.TrimPrefix(raw, "-")
		if digits == "" || len(digits) > 15 || (digits[0] == '0' && len(raw) > 1) {
			return false
		}
		for i := 0; i < len(digits); i++ {
			if digits[i] < '0' || digits[i] > '9' {
				return false
			}
		}
		bits := 64
		if fp.int32 {
			bits = 32
		}
		v, err := strconv.ParseInt(raw, 10, bits)
		if err != nil {
			return false
		}
		f := float64(v)
		return (fp.min == nil || f >= *fp.min) && (fp.max == nil || f <= *fp.max)
	case openapi3.TypeBoolean:
		return raw == "true" || raw == "false"
	}
	return false
}
