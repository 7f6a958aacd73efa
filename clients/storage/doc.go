// Package storage is the client of apistack's storage API: bucket lifecycle
// configurations, signed with CLOUD4-HMAC-SHA256 (package sigv4). The lifecycle
// document's types (LifecycleConfiguration, Rule, ...) are the package's own,
// converted at the edge to the ones gen/lifecycle generates from
// specs/storage/lifecycle.xsd; the functions of rules.go build the common rules.
package storage
