// Package storageapi holds the code generated from specs/storage/openapi.yaml:
// the models and a typed client, and nothing else: the strict echo server
// interface and the embedded spec are in gen/storageserver, so a service that imports
// this package compiles no server code. The lifecycle document's types are not generated here: the spec points
// at gen/lifecycle's (generated from specs/storage/lifecycle.xsd) with
// x-go-type. Nothing in it is edited by hand; run `make generate` after a spec
// edit.
package storageapi

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/storage/openapi.yaml
