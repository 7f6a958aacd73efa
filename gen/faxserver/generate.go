// Package faxserver holds the server side generated from specs/fax/openapi.yaml:
// the strict echo server interface, its request and response objects, the
// echo registration glue and the embedded spec. The models and the client are
// in gen/faxapi. Nothing in it is edited by hand; run `make generate` after a
// spec edit.
package faxserver

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/fax/openapi.yaml
