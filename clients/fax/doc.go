// Package fax is the client other services import to use the fax API: Send,
// Get, a List iterator, Delete, Cancel and Refresh on top of the generated
// client (gen/faxapi), and NewWebhookHandler, the http.Handler that receives
// the fax service's webhooks, verifies their Ed25519 signatures and hands the
// typed events to the caller.
package fax
