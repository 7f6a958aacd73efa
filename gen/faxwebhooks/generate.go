// Package faxwebhooks holds the code generated from specs/fax/webhooks.yaml:
// the event models, the client the fax server delivers events with, the
// strict echo server interface a receiver (clients/fax) implements, and the
// embedded spec. Nothing in it is edited by hand; run `make generate` after a
// spec edit.
package faxwebhooks

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/fax/webhooks.yaml
