// Package faxwebhooks holds the code generated from specs/fax/webhooks.yaml:
// the event models and the client the fax server delivers events with. The
// strict echo server interface and the embedded spec are in
// gen/faxwebhooksserver. Nothing in it is edited by hand; run `make generate` after a
// spec edit.
package faxwebhooks

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../../specs/fax/webhooks.yaml
