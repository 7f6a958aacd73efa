// Package restaurantserver holds the server side generated from specs/restaurant/openapi.yaml:
// the strict echo server interface, its request and response objects, the
// echo registration glue and the embedded spec. The models and the client are
// in gen/restaurantapi. Nothing in it is edited by hand; run `make generate` after a
// spec edit.
package restaurantserver

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/restaurant/openapi.yaml
