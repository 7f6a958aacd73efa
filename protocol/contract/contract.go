// Package contract checks HTTP traffic against an API's OpenAPI document from
// the client's side of the wire: Transport is an http.RoundTripper that
// validates every request before it is sent and every response before the
// caller sees it, and fails the call with a *Violation when either breaks the
// spec.
//
// Put it under a generated or ergonomic client in contract tests, so a server
// bug cannot hide behind a bug in the server's own validation middleware:
//
//	rt, _ := contract.ForAPI(contract.PAM, http.DefaultTransport)
//	client, _ := pamapi.NewClientWithResponses(url, pamapi.WithHTTPClient(&http.Client{Transport: rt}))
//
// The response is read whole and checked before RoundTrip returns, so a
// violation is reported before the caller can see the answer end. A
// Transport from ForAPI records each (operation, status) it checked when
// APISTACK_CONTRACT_COVERAGE_DIR is set (see internal/contractcoverage).
package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/internal/pathroute"
	"github.com/apistack/apistack/internal/replay"
	"github.com/apistack/apistack/internal/specload"
	"github.com/apistack/apistack/internal/xmlbody"
)

// API names an apistack API whose spec this package embeds (package specs,
// the hand-written documents as they are served at /openapi.yaml: no
// generated server package, so importing contract compiles no echo).
type API string

// The APIs whose specs are embedded.
const (
	PAM        API = "pam"
	Admin      API = "admin"
	Restaurant API = "restaurant"
	Fax        API = "fax"
	// Storage is the storage API; ForAPI registers the decoder of its XML
	// bodies (internal/xmlbody) with openapi3filter.
	Storage API = "storage"
	// Sandbox is the sandbox API (served on the admin port under /sandboxes).
	Sandbox API = "sandbox"
	// FaxWebhooks is the receiving endpoint of the fax webhooks (specs/fax/webhooks.yaml).
	FaxWebhooks API = "faxwebhooks"
)

// loadSpec parses api's document from specs.FS (its path is the one the
// contract coverage record names it by).
func loadSpec(api API) (*openapi3.T, error) {
	path, ok := contractcoverage.APIs[string(api)]
	if !ok {
		return nil, fmt.Errorf("contract: no spec for API %q", api)
	}
	spec, err := specload.Load(path)
	if err != nil {
		return nil, fmt.Errorf("contract: %s spec: %w", api, err)
	}
	return spec, nil
}

// Violation is the error of a request or response that breaks the spec.
type Violation struct {
	// Side is "request" or "response".
	Side   string
	Method string
	URL    string
	// Status is the response status (0 for a request violation).
	Status int
	// Err is the validator's explanation.
	Err error
}

// Error implements error.
func (v *Violation) Error() string {
	if v.Side == "request" {
		return fmt.Sprintf("contract: request %s %s breaks the spec: %v", v.Method, v.URL, v.Err)
	}
	return fmt.Sprintf("contract: response %d to %s %s breaks the spec: %v", v.Status, v.Method, v.URL, v.Err)
}

// Unwrap returns the validator's error.
func (v *Violation) Unwrap() error { return v.Err }

// Option configures a Transport.
type Option func(*Transport)

// WithoutRequestValidation lets requests through unchecked (their responses
// are still checked): for tests that send bad input on purpose.
func WithoutRequestValidation() Option { return func(t *Transport) { t.checkRequests = false } }

// WithoutCoverage leaves the responses out of the contract coverage record
// (internal/contractcoverage), which counts what apistack's stand-ins answer:
// for a caller that may talk to another service (apistack conform against a
// real service or a mock), whose answers say nothing of the stand-ins'.
func WithoutCoverage() Option { return func(t *Transport) { t.noCoverage = true } }

// OnViolation reports violations to f instead of failing the call; the call
// then goes on as if nothing were wrong. Tests pass a function that calls
// t.Errorf, so every violation is listed, not only the first.
func OnViolation(f func(*Violation)) Option { return func(t *Transport) { t.report = f } }

// WithCredentialCheck adds check to the check of each security scheme of an
// operation: once the scheme's credential is found present, check runs with
// the scheme, the request and its body, and an error fails the requirement.
// Where the caller knows the key it verifies the credential itself, e.g. the
// Ed25519 signature of a fax webhook delivery (scheme webhookSignature).
func WithCredentialCheck(check func(scheme *openapi3.SecurityScheme, req *http.Request, body []byte) error) Option {
	return func(t *Transport) { t.checkCredential = check }
}

// Transport validates requests and responses against a spec.
type Transport struct {
	// api names the API in the contract coverage record ("" records nothing).
	api           API
	noCoverage    bool
	next          http.RoundTripper
	router        routers.Router
	checkRequests bool
	report        func(*Violation)
	// checkCredential verifies a credential found present (WithCredentialCheck).
	checkCredential func(scheme *openapi3.SecurityScheme, req *http.Request, body []byte) error
}

// ForAPI returns a Transport for one of the embedded apistack specs.
func ForAPI(api API, next http.RoundTripper, opts ...Option) (*Transport, error) {
	spec, err := loadSpec(api)
	if err != nil {
		return nil, err
	}
	if api == Storage {
		xmlbody.Register()
	}
	t, err := New(spec, next, opts...)
	if err != nil {
		return nil, err
	}
	t.api = api
	return t, nil
}

// New returns a Transport validating against spec and sending through next
// (http.DefaultTransport when nil).
func New(spec *openapi3.T, next http.RoundTripper, opts ...Option) (*Transport, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	router, err := pathroute.New(spec)
	if err != nil {
		return nil, err
	}
	t := &Transport{next: next, router: router, checkRequests: true}
	for _, o := range opts {
		o(t)
	}
	return t, nil
}

// RoundTrip validates req, sends it, and validates the response.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := replay.ReadBody(req)
	if err != nil {
		return nil, fmt.Errorf("contract: read request body: %w", err)
	}
	check := replay.WithBody(req, body)
	route, params, routeErr := t.router.FindRoute(check)
	input := &openapi3filter.RequestValidationInput{
		Request: check, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: t.authenticate(body), MultiError: true, SkipSettingDefaults: true},
	}
	if t.checkRequests {
		verr := routeErr
		if verr == nil {
			verr = openapi3filter.ValidateRequest(req.Context(), input)
		}
		if verr != nil {
			if v := t.violation(&Violation{Side: "request", Method: req.Method, URL: req.URL.String(), Err: verr}); v != nil {
				return nil, v
			}
		}
	}

	send := replay.WithBody(req, body)
	resp, err := t.next.RoundTrip(send)
	if err != nil || routeErr != nil {
		return resp, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("contract: read response: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true},
	}
	in.SetBodyBytes(respBody)
	// The whole answer is read and checked before the caller gets it: a
	// violation is reported before the caller can see the response end.
	verr := openapi3filter.ValidateResponse(req.Context(), in)
	record := t.api != "" && !t.noCoverage
	if verr == nil && record {
		verr = contractcoverage.Record(string(t.api), route.Operation.OperationID, resp.StatusCode)
	}
	if verr == nil && record {
		verr = contractcoverage.RecordFields(string(t.api), route.Operation, resp.StatusCode, resp.Header, nil, respBody)
	}
	if verr != nil {
		if v := t.violation(&Violation{Side: "response", Method: req.Method, URL: req.URL.String(), Status: resp.StatusCode, Err: verr}); v != nil {
			return nil, v
		}
	}
	return resp, nil
}

// violation reports v and returns it as the call's error unless a reporter
// took it.
func (t *Transport) violation(v *Violation) error {
	if t.report != nil {
		t.report(v)
		return nil
	}
	return v
}

// authenticate checks a security scheme of a request whose body is body:
// the credential is present, and passes the caller's check when there is one.
func (t *Transport) authenticate(body []byte) openapi3filter.AuthenticationFunc {
	return func(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
		if err := credentialsPresent(ctx, in); err != nil {
			return err
		}
		if t.checkCredential == nil {
			return nil
		}
		return t.checkCredential(in.SecurityScheme, in.RequestValidationInput.Request, body)
	}
}

// credentialsPresent is the client side's check of a security scheme: it
// cannot know whether a credential is valid, only that one is sent.
func credentialsPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	req := in.RequestValidationInput.Request
	scheme := in.SecurityScheme
	switch {
	case scheme.Type == "http" && strings.EqualFold(scheme.Scheme, "bearer"):
		if h := req.Header.Get("Authorization"); len(h) < 8 || !strings.EqualFold(h[:7], "Bearer ") {
			return errors.New("no Authorization: Bearer header")
		}
	case scheme.Type == "http":
		if req.Header.Get("Authorization") == "" {
			return errors.New("no Authorization header")
		}
	case scheme.Type == "apiKey" && scheme.In == "header":
		if req.Header.Get(scheme.Name) == "" {
			return fmt.Errorf("no %s header", scheme.Name)
		}
	case scheme.Type == "apiKey" && scheme.In == "query":
		if !req.URL.Query().Has(scheme.Name) {
			return fmt.Errorf("no %s query parameter", scheme.Name)
		}
	}
	return nil
}
