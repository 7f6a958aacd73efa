// Package lifecycle holds the Go types generated from specs/storage/lifecycle.xsd,
// the storage API's lifecycle configuration document, used by both the client
// (clients/storage) and the server (servers/storage). Nothing in it is edited by
// hand; run `make generate` after editing the schema. The generator is
// gen/internal/xsdgen; strict reading and validation against the same schema is
// internal/lifecycledoc's job (encoding/xml alone ignores order and
// namespaces of child elements).
package lifecycle

//go:generate go run ../internal/xsdgen -xsd ../../specs/storage/lifecycle.xsd -source specs/storage/lifecycle.xsd -package lifecycle -o lifecycle.gen.go
