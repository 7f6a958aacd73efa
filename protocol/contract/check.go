package contract

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/apistack/apistack/internal/replay"
)

// Checked is a request checked against the spec by CheckRequest, which
// checks the response to it: the two sides of an exchange one at a time, for
// a caller that moves the bytes itself (a recording proxy, a replay of a
// recorded file) rather than sending through the Transport.
type Checked struct {
	t     *Transport
	route *routers.Route
	input *openapi3filter.RequestValidationInput
}

// CheckRequest validates req, whose body is body (req.Body is not read),
// with the Transport's options (its credential check included). It returns
// the check of the response to come and the request's violation, nil when it
// keeps to the spec. When no operation of the spec has req's method and
// path, the Checked knows no operation (Operation is "") and the error says
// why. Nothing is recorded in the contract coverage record: a proxy sees
// traffic, not tests.
func (t *Transport) CheckRequest(ctx context.Context, req *http.Request, body []byte) (*Checked, error) {
	return t.checkRequest(ctx, req, body, false)
}

// CheckRequestHead is CheckRequest for a request whose body is not known
// whole (cut at a recording's cap): everything but the body is checked.
func (t *Transport) CheckRequestHead(ctx context.Context, req *http.Request) (*Checked, error) {
	return t.checkRequest(ctx, req, nil, true)
}

func (t *Transport) checkRequest(ctx context.Context, req *http.Request, body []byte, noBody bool) (*Checked, error) {
	check := replay.WithBody(req, body)
	route, params, err := t.router.FindRoute(check)
	if err != nil {
		return &Checked{t: t}, err
	}
	input := &openapi3filter.RequestValidationInput{
		Request: check, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: t.authenticate(body), MultiError: true, SkipSettingDefaults: true,
			ExcludeRequestBody: noBody},
	}
	return &Checked{t: t, route: route, input: input}, openapi3filter.ValidateRequest(ctx, input)
}

// Operation is the operationId of the request's operation ("" when none
// has its method and path).
func (c *Checked) Operation() string {
	if c.route == nil {
		return ""
	}
	return c.route.Operation.OperationID
}

// Route is the request's route in the spec: its operation, path and the
// document (nil when no operation has the request's method and path).
func (c *Checked) Route() *routers.Route { return c.route }

// CheckResponse validates the answer to the checked request: its status
// (one the operation declares), headers and body. It returns nil for a
// request of no operation: there is nothing to hold its answer to.
func (c *Checked) CheckResponse(ctx context.Context, status int, header http.Header, body []byte) error {
	return c.checkResponse(ctx, status, header, body, false)
}

// CheckResponseHead is CheckResponse for an answer whose body is not known
// whole: its status and headers are checked.
func (c *Checked) CheckResponseHead(ctx context.Context, status int, header http.Header) error {
	return c.checkResponse(ctx, status, header, nil, true)
}

func (c *Checked) checkResponse(ctx context.Context, status int, header http.Header, body []byte, noBody bool) error {
	if c.route == nil {
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: c.input,
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true, ExcludeResponseBody: noBody},
	}
	in.SetBodyBytes(body)
	err := openapi3filter.ValidateResponse(ctx, in)
	var rerr *openapi3filter.ResponseError
	if err == nil || !errors.As(err, &rerr) || !strings.Contains(rerr.Reason, "header") {
		return err
	}
	// kin-openapi stops at the first header that breaks the spec: check
	// each declared header alone, and the body without them, so every
	// violation is reported.
	return c.eachPart(ctx, status, header, body, noBody)
}

// eachPart validates the answer's declared headers one at a time, then its
// body, against copies of the operation that declare only that part.
func (c *Checked) eachPart(ctx context.Context, status int, header http.Header, body []byte, noBody bool) error {
	ref := c.route.Operation.Responses.Status(status)
	if ref == nil {
		ref = c.route.Operation.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return nil
	}
	check := func(only *openapi3.Response, skipBody bool) error {
		op := *c.route.Operation
		op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, &openapi3.ResponseRef{Value: only}))
		route := *c.route
		route.Operation = &op
		input := *c.input
		input.Route = &route
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &input, Status: status, Header: header,
			Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true, ExcludeResponseBody: skipBody},
		}
		in.SetBodyBytes(body)
		return openapi3filter.ValidateResponse(ctx, in)
	}
	names := make([]string, 0, len(ref.Value.Headers))
	for name := range ref.Value.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	var errs openapi3.MultiError
	for _, name := range names {
		only := *ref.Value
		only.Headers = openapi3.Headers{name: ref.Value.Headers[name]}
		if err := check(&only, true); err != nil {
			errs = append(errs, err)
		}
	}
	if !noBody {
		only := *ref.Value
		only.Headers = nil
		if err := check(&only, false); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
