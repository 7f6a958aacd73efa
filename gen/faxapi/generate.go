// Package faxapi holds the code generated from specs/fax/openapi.yaml:
// the models and a typed client, and nothing else: the strict echo server
// interface and the embedded spec are in gen/faxserver, so a service that imports
// this package compiles no server code. Nothing in it is edited by hand; run `make generate` after a spec edit.
package faxapi

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/fax/openapi.yaml
