// Package contract checks HTTP traffic against an apistack API's OpenAPI
// document from the client's side of the wire: Transport is an
// http.RoundTripper that validates every request before it is sent and every
// response before the caller sees it, and fails the call with a *Violation
// when either breaks the spec.
//
// Put it under a generated or ergonomic client in contract tests:
//
//	rt, _ := contract.ForAPI(contract.PAM, http.DefaultTransport)
//	client, _ := pamapi.NewClientWithResponses(url, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
//
// This is the import path client code uses. The checks themselves live in
// github.com/apistack/apistack/protocol/contract, which the servers' own
// tests use too (the servers import no client package, so what both sides
// share sits outside both); every name here is that package's, so values
// pass freely between the two paths.
package contract

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apistack/apistack/protocol/contract"
)

// API names an apistack API whose spec the package embeds.
type API = contract.API

// The APIs whose specs are embedded.
const (
	PAM        = contract.PAM
	Admin      = contract.Admin
	Restaurant = contract.Restaurant
	Fax        = contract.Fax
	// Storage is the storage API; ForAPI registers the decoder of its XML
	// bodies with openapi3filter.
	Storage = contract.Storage
	// Sandbox is the sandbox API (served on the admin port under /sandboxes).
	Sandbox = contract.Sandbox
	// FaxWebhooks is the receiving endpoint of the fax webhooks (specs/fax/webhooks.yaml).
	FaxWebhooks = contract.FaxWebhooks
)

// Violation is the error of a request or response that breaks the spec
// (Side "request" or "response", the method, URL, status and the
// validator's explanation in Err).
type Violation = contract.Violation

// Option configures a Transport.
type Option = contract.Option

// Transport validates requests and responses against a spec.
type Transport = contract.Transport

// Checked is a request checked by Transport.CheckRequest (or
// CheckRequestHead), which checks the response to it: the two sides of an
// exchange one at a time, for a caller that moves the bytes itself (a
// recording proxy, a replay of a recorded file).
type Checked = contract.Checked

// ForAPI returns a Transport for one of the embedded apistack specs, sending
// through next (http.DefaultTransport when nil).
func ForAPI(api API, next http.RoundTripper, opts ...Option) (*Transport, error) {
	return contract.ForAPI(api, next, opts...)
}

// New returns a Transport validating against spec and sending through next
// (http.DefaultTransport when nil).
func New(spec *openapi3.T, next http.RoundTripper, opts ...Option) (*Transport, error) {
	return contract.New(spec, next, opts...)
}

// WithoutRequestValidation lets requests through unchecked (their responses
// are still checked): for tests that send bad input on purpose.
func WithoutRequestValidation() Option { return contract.WithoutRequestValidation() }

// OnViolation reports violations to f instead of failing the call; the call
// then goes on as if nothing were wrong.
func OnViolation(f func(*Violation)) Option { return contract.OnViolation(f) }

// WithCredentialCheck adds check to the check of each security scheme of an
// operation: once the scheme's credential is found present, check runs with
// the scheme, the request and its body, and an error fails the requirement.
func WithCredentialCheck(check func(scheme *openapi3.SecurityScheme, req *http.Request, body []byte) error) Option {
	return contract.WithCredentialCheck(check)
}
