// Package sandboxapi holds the code generated from specs/sandbox/openapi.yaml:
// the models and a typed client, and nothing else: the strict echo server
// interface and the embedded spec are in gen/sandboxserver, so a service that imports
// this package compiles no server code. Nothing in it is edited by hand; run `make generate` after a spec edit.
package sandboxapi

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/sandbox/openapi.yaml
//go:generate go run ../../tools/fixtureschema -spec ../../specs/sandbox/openapi.yaml -out ../../specs/sandbox/fixture.schema.json
