// Package sandboxapi holds the code generated from specs/sandbox/openapi.yaml:
// models, a typed client, the strict echo server interface and the embedded
// spec. Nothing in it is edited by hand; run `make generate` after a spec edit.
package sandboxapi

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/sandbox/openapi.yaml
