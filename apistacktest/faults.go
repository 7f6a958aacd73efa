package apistacktest

import (
	"fmt"

	"github.com/apistack/apistack/servers/faults"
)

// Fault makes some requests of an API misbehave: see the fields.
type Fault = faults.Fault

// FaultKind is what a Fault does to a request.
type FaultKind = faults.Kind

// The kinds of fault. Each answers in the API's own shape: PAM's 429 and
// 503 carry the four X-RateLimit-* headers (X-RateLimit-Retry-At in the
// stack's time) and every 429 and 503 a Retry-After; the restaurant API's
// 429 is RATE_LIMITED with Retry-After; 500s carry the API's documented
// error body (PAM unknown_error, fax internal_error, storage InternalError in
// XML, restaurant INTERNAL_ERROR). The fax and storage specs declare no 429
// or 503: theirs carry the API's internal error body and Retry-After.
const (
	// RateLimited answers 429.
	RateLimited = faults.RateLimited
	// Unavailable answers 503.
	Unavailable = faults.Unavailable
	// InternalError answers 500.
	InternalError = faults.InternalError
	// Slow serves the request after Fault.Delay of real time (the caller's
	// timeout runs in real time).
	Slow = faults.Slow
	// Drop closes the connection without an answer.
	Drop = faults.Drop
)

// Violation is a request that broke its API's spec; its Error names the
// API, the operation, and each field with the rule it broke.
type Violation = faults.Violation

// WebhookFaults makes fax webhook deliveries come twice (Duplicate) or out
// of order (Reorder), as at-least-once delivery allows.
type WebhookFaults = faults.Webhooks

// Inject makes requests of api (PAM, Fax, Storage, Restaurant) misbehave as
// f says, e.g. the next 2 ListGroups calls answer 429:
//
//	st.Inject(t, apistacktest.PAM, apistacktest.Fault{Kind: apistacktest.RateLimited, Operation: "ListGroups", Count: 2})
func (st *Stack) Inject(t TB, api string, f Fault) {
	t.Helper()
	if err := st.InjectErr(api, f); err != nil {
		t.Fatalf("%v", err)
	}
}

// InjectErr is Inject returning the error (an unknown API or operation).
func (st *Stack) InjectErr(api string, f Fault) error {
	if st.remote != nil {
		if api != PAM && api != Fax && api != Storage && api != Restaurant {
			return fmt.Errorf("apistacktest: no API %q (PAM, Fax, Storage or Restaurant)", api)
		}
		return st.remote.addFault(api, f)
	}
	in, ok := st.injectors[api]
	if !ok {
		return fmt.Errorf("apistacktest: no API %q (PAM, Fax, Storage or Restaurant)", api)
	}
	return in.Add(f)
}

// ClearFaults removes the faults of every API (connected: the sandbox's
// webhook faults too).
func (st *Stack) ClearFaults() {
	if st.remote != nil {
		if err := st.remote.clearFaults(); err != nil {
			st.remote.t.Errorf("%v", err)
		}
		return
	}
	for _, in := range st.injectors {
		in.Clear()
	}
}

// Injected returns how many requests of api faults of kind k took.
func (st *Stack) Injected(api string, k FaultKind) int {
	if st.remote != nil {
		return st.remote.injected(api, k)
	}
	if in, ok := st.injectors[api]; ok {
		return in.Injected(k)
	}
	return 0
}

// Webhooks returns the faults of the fax webhook deliveries: in process
// the kit's *WebhookFaults, connected the sandbox's webhook faults.
func (st *Stack) Webhooks() WebhookFaulter {
	if st.remote != nil {
		return remoteWebhooks{st.remote}
	}
	return st.webhooks
}
