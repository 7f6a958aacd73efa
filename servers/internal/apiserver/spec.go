package apiserver

import (
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// parsedSpecs holds each API's parsed spec: parsing one costs milliseconds, and
// the test kit builds a server of every API per test. A spec is only read
// once parsed, so the servers of one process share it.
var parsedSpecs sync.Map // name -> *specEntry

type specEntry struct {
	once sync.Once
	spec *openapi3.T
	err  error
}

// Spec returns the spec of the API name, parsed by load on the first call
// only.
func Spec(name string, load func() (*openapi3.T, error)) (*openapi3.T, error) {
	v, _ := parsedSpecs.LoadOrStore(name, &specEntry{})
	e := v.(*specEntry)
	e.once.Do(func() { e.spec, e.err = load() })
	return e.spec, e.err
}
