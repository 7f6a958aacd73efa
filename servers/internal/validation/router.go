package validation

import (
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// NewRouter returns the router the middleware finds operations with: the
// spec's paths under each of its servers' path prefixes, whatever their host.
// apiserver uses it to know a request's operation before the body is read.
func NewRouter(spec *openapi3.T) (routers.Router, error) {
	return newPathRouter(spec)
}
