// Package faxapi holds the code generated from specs/fax/openapi.yaml:
// models, a typed client, the strict echo server interface and the embedded
// spec. Nothing in it is edited by hand; run `make generate` after a spec edit.
package faxapi

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/fax/openapi.yaml
