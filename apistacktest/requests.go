package apistacktest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apistack/apistack/gen/sandboxapi"
)

// Request is one request the stack's credentials made, with its answer, as
// the sandbox API's journal lists it (GET /sandboxes/{id}/requests):
// operation, method, path, status, time, bodies up to 16 KiB, headers with
// secrets redacted, and the spec violations found in it.
type Request = sandboxapi.JournalEntry

// RequestFilter selects requests; the zero value selects every one.
type RequestFilter struct {
	// API is "pam", "fax", "storage" or "restaurant".
	API string
	// Operation is an operationId of the API's spec ("SendFax").
	Operation string
	// Status is the HTTP status answered.
	Status int
	// Since is the earliest arrival (the stack's clock).
	Since time.Time
}

// Requests lists, oldest first, the requests the stack's credentials made
// that f selects: what the code under test sent ("my service sent this fax
// to this number once"). It reads the same journal in process (Start) and
// connected (Connect, the sandbox's journal). In process, a request a
// fault (Inject) answered is not listed: the kit's faults answer before
// the credentials are known. It fails the test on an error.
func (st *Stack) Requests(t TB, f RequestFilter) []Request {
	t.Helper()
	out, err := st.RequestsErr(context.Background(), f)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// RequestsErr is Requests returning the error.
func (st *Stack) RequestsErr(ctx context.Context, f RequestFilter) ([]Request, error) {
	params := sandboxapi.ListSandboxRequestsParams{Limit: ptr(1000)}
	if f.API != "" {
		params.Api = ptr(sandboxapi.ListSandboxRequestsParamsApi(f.API))
	}
	if f.Operation != "" {
		params.Operation = &f.Operation
	}
	if f.Status != 0 {
		params.Status = &f.Status
	}
	if !f.Since.IsZero() {
		params.Since = &f.Since
	}
	out := []Request{}
	for {
		page, err := st.requestsPage(ctx, params)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Data...)
		if page.NextAfter == nil {
			return out, nil
		}
		params.After = page.NextAfter
	}
}

func (st *Stack) requestsPage(ctx context.Context, params sandboxapi.ListSandboxRequestsParams) (*sandboxapi.JournalPage, error) {
	if st.remote == nil {
		if st.servers == nil {
			return nil, errors.New("apistacktest: the stack is closed")
		}
		page := st.servers.Sandboxes.Journal().Local(params)
		return &page, nil
	}
	resp, err := st.remote.api.ListSandboxRequestsWithResponse(ctx, st.remote.id, &params)
	if err == nil && resp.JSON200 == nil {
		err = fmt.Errorf("%d %s", resp.StatusCode(), resp.Body)
	}
	if err != nil {
		return nil, fmt.Errorf("apistacktest: the journal of sandbox %s: %w", st.remote.id, err)
	}
	return resp.JSON200, nil
}

// RequestViolation is a request the journal lists with spec violations.
type RequestViolation struct {
	Request Request
}

// Error names the request, and each place and rule it broke.
func (v RequestViolation) Error() string {
	msg := fmt.Sprintf("request %s %s (%s %s) breaks the %s spec:", v.Request.Method, v.Request.Path, v.Request.Api, v.Request.Operation, v.Request.Api)
	for _, c := range v.Request.Violations {
		msg += fmt.Sprintf(" %s %s: %s;", c.In, c.Name, c.Rule)
	}
	return msg
}

// remoteViolations are the journal's requests with violations.
func (st *Stack) remoteViolations() []error {
	st.remote.mu.Lock()
	closed, final := st.remote.closed, st.remote.final
	st.remote.mu.Unlock()
	if closed {
		return append([]error(nil), final...)
	}
	all, err := st.RequestsErr(context.Background(), RequestFilter{})
	if err != nil {
		return []error{err}
	}
	var out []error
	for _, r := range all {
		if len(r.Violations) > 0 {
			out = append(out, RequestViolation{Request: r})
		}
	}
	return out
}
