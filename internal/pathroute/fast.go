// Package pathroute finds the operation of a request in an OpenAPI document
// as kin-openapi's gorilla/mux router does, by path alone and, for the
// plain paths every request of the APIs has, without regular expressions.
// The servers' validation and the contract checker both route with it, so
// a request is held to the same operation on either side.
package pathroute

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// New returns the router of spec. It routes on paths alone: a servers entry
// with a host would make the router refuse requests addressed to any other
// host (127.0.0.1 vs localhost, a port chosen at run time, a deployment's
// own name), so the document's servers are replaced with their path parts.
// Plain paths are routed by the fast router, the rest by gorilla/mux.
func New(spec *openapi3.T) (routers.Router, error) {
	doc := *spec
	seen := map[string]bool{}
	var servers openapi3.Servers
	for _, s := range spec.Servers {
		path := "/"
		if u, err := url.Parse(s.URL); err == nil && u.Path != "" {
			path = u.Path
		}
		if !seen[path] {
			seen[path] = true
			servers = append(servers, &openapi3.Server{URL: path})
		}
	}
	if len(servers) == 0 {
		servers = openapi3.Servers{{URL: "/"}}
	}
	doc.Servers = servers
	router, err := gorillamux.NewRouter(&doc)
	if err != nil {
		return nil, fmt.Errorf("pathroute: %w", err)
	}
	return newFastRouter(&doc, router), nil
}

// fastRouter finds a request's operation as the gorilla/mux router of
// kin-openapi does, without its regular expressions, for the paths every
// request of the APIs has: plain segments, each template variable a whole
// segment. It is asked first, on every request, by the servers' validation,
// the body gate, the journal, the request log and the contract checker; a
// path it cannot answer for certain (an escaped or unusual character, no
// template matching, a method the matching path does not take) goes to the
// mux router, which answers it as it always did.
//
// gorilla/mux tries the templates in the order kin-openapi registers them
// (openapi3.Paths.InMatchingOrder) and takes the first whose path matches,
// a variable matching one or more characters other than '/'; the method is
// checked after. fastRouter walks the same templates in the same order with
// the same rule, so on the paths it answers for it returns the same route.
// Each template is checked against the mux router when it is built: if any
// template is not of the simple shape, or the mux router does not route a
// probe of it to it, fastRouter answers nothing and every request goes to the
// mux router.
type fastRouter struct {
	slow      routers.Router
	templates []fastTemplate // in the mux router's order; nil: always ask slow
}

// fastTemplate is one path template: its segments and the route the mux
// router returns for it, less the method and operation.
type fastTemplate struct {
	segments []fastSegment
	route    routers.Route
	pathItem *openapi3.PathItem
}

// fastSegment is a literal segment or, when variable is set, a template
// variable named so.
type fastSegment struct {
	literal  string
	variable string
}

// newFastRouter returns doc's fast router over slow, the mux router built
// from the same doc.
func newFastRouter(doc *openapi3.T, slow routers.Router) routers.Router {
	r := &fastRouter{slow: slow}
	if len(doc.Servers) != 1 || doc.Paths == nil {
		return r
	}
	base := strings.TrimSuffix(doc.Servers[0].URL, "/")
	if !strings.HasPrefix(base, "/") && base != "" {
		return r
	}
	var templates []fastTemplate
	for _, path := range doc.Paths.InMatchingOrder() {
		segments, ok := splitTemplate(base + path)
		if !ok {
			return r
		}
		pathItem := doc.Paths.Value(path)
		var route routers.Route
		if len(pathItem.Operations()) > 0 {
			// A template without operations routes every request to the
			// mux router's "method not allowed": nothing to probe.
			if route, ok = probeRoute(slow, segments, path, pathItem); !ok {
				return r
			}
		}
		templates = append(templates, fastTemplate{segments: segments, route: route, pathItem: pathItem})
	}
	r.templates = templates
	return r
}

// splitTemplate splits a path template into segments; ok is false for a
// template fastRouter does not take (a variable sharing its segment with
// other characters, a variable with its own pattern, an escaped character).
func splitTemplate(template string) ([]fastSegment, bool) {
	if !strings.HasPrefix(template, "/") {
		return nil, false
	}
	var out []fastSegment
	for _, seg := range strings.Split(template[1:], "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			name := seg[1 : len(seg)-1]
			if name == "" || strings.ContainsAny(name, "{}:") {
				return nil, false
			}
			out = append(out, fastSegment{variable: name})
			continue
		}
		if strings.ContainsAny(seg, "{}") || !plainPath(seg) {
			return nil, false
		}
		out = append(out, fastSegment{literal: seg})
	}
	return out, true
}

// probeFiller is the value a probe gives each variable: no literal segment
// of any API is spelled so.
const probeFiller = "fast-route-probe-7f3a"

// probeRoute asks the mux router for a path the template matches and returns
// the route it finds, less method and operation; ok is false unless that
// route is the template's own.
func probeRoute(slow routers.Router, segments []fastSegment, path string, pathItem *openapi3.PathItem) (routers.Route, bool) {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		if s.variable != "" {
			b.WriteString(probeFiller)
		} else {
			b.WriteString(s.literal)
		}
	}
	var method string
	for m := range pathItem.Operations() {
		method = m
		break
	}
	req, err := http.NewRequest(method, "http://probe.invalid"+b.String(), nil)
	if err != nil {
		return routers.Route{}, false
	}
	route, vars, err := slow.FindRoute(req)
	if err != nil || route.Path != path || route.PathItem != pathItem {
		return routers.Route{}, false
	}
	for _, s := range segments {
		if s.variable != "" && vars[s.variable] != probeFiller {
			return routers.Route{}, false
		}
	}
	out := *route
	out.Method, out.Operation = "", nil
	return out, true
}

// FindRoute implements routers.Router.
func (r *fastRouter) FindRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	if route, vars, ok := r.find(req); ok {
		return route, vars, nil
	}
	return r.slow.FindRoute(req)
}

// find returns the route of req when it is sure to be the mux router's.
func (r *fastRouter) find(req *http.Request) (*routers.Route, map[string]string, bool) {
	if r.templates == nil || req.URL.RawPath != "" || !plainPath(req.URL.Path) || !strings.HasPrefix(req.URL.Path, "/") {
		return nil, nil, false
	}
	path := req.URL.Path[1:]
	for i := range r.templates {
		t := &r.templates[i]
		if !t.matches(path) {
			continue
		}
		op := t.pathItem.GetOperation(req.Method)
		if op == nil {
			// The mux router answers "method not allowed": let it.
			return nil, nil, false
		}
		route := t.route
		route.Method, route.Operation = req.Method, op
		return &route, t.vars(path), true
	}
	return nil, nil, false
}

// matches reports whether path (without its leading '/') has the template's
// segments: each literal as written, each variable one or more characters.
func (t *fastTemplate) matches(path string) bool {
	for i, s := range t.segments {
		seg, rest, more := strings.Cut(path, "/")
		last := i == len(t.segments)-1
		if more == last {
			return false
		}
		if s.variable != "" {
			if seg == "" {
				return false
			}
		} else if seg != s.literal {
			return false
		}
		path = rest
	}
	return true
}

// vars returns the variables of a path the template matches.
func (t *fastTemplate) vars(path string) map[string]string {
	vars := make(map[string]string, 2)
	for _, s := range t.segments {
		seg, rest, _ := strings.Cut(path, "/")
		if s.variable != "" {
			vars[s.variable] = seg
		}
		path = rest
	}
	return vars
}

// plainPath reports whether p holds only characters a URL path carries as
// they are (RFC 3986's unreserved characters) and '/': the path the mux
// router matches (its escaped form) is then p itself.
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '/':
		default:
			return false
		}
	}
	return true
}
