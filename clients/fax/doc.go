// Package fax is the client other services import to use the fax API, after
// the convention of package clients: SendFax, GetFax, a ListFaxes iterator,
// DeleteFax, CancelFax and RefreshFax; the fax applications (ListApplications,
// CreateApplication, GetApplication, UpdateApplication, DeleteApplication);
// and NewWebhookHandler, the http.Handler that receives the fax service's
// webhooks, verifies their Ed25519 signatures and hands the typed events to
// the caller. Error answers are *Error (a clients.Error); retries follow
// Config.Retry (SendFax is never retried).
package fax
