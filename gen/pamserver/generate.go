// Package pamserver holds the server side generated from specs/pam/openapi.yaml:
// the strict echo server interface, its request and response objects, the
// echo registration glue and the embedded spec. The models and the client are
// in gen/pamapi. Nothing in it is edited by hand; run `make generate` after a
// spec edit.
package pamserver

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/pam/openapi.yaml
