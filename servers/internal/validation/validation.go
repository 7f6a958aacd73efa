// Package validation is the echo middleware that checks every request, and
// optionally every response, against an API's OpenAPI 3 document with
// kin-openapi's openapi3filter.
//
// Requests that break the spec never reach a handler: the middleware returns a
// *Failure, which the API's error handler renders in the API's own error shape.
// The handler then works on exactly the value that was validated: the JSON body
// is decoded once, strictly (duplicate keys and trailing data are refused),
// validated, and handed on as its canonical re-encoding, so no second decoder
// can read the bytes differently from the validator.
//
// Response validation buffers each response, checks its status, headers and
// body against the operation, reports a violation to a hook, and only then
// sends the response: tests fail on any violation, `apistack serve
// --validate-responses` logs them. A caller cannot have read the end of an
// answer whose check has not finished, so a test that passed had every
// response it received checked. A violation never changes the answer. At run
// time (Options.Background) a response is sent first and checked on a
// bounded pool instead, sampled when the pool is saturated.
//
// When the environment names a directory for it (contractcoverage.EnvDir),
// every (operation, status) pair answered and held to the spec is recorded
// there, with the declared properties and headers the answer carried, to
// prove each pair and each field the spec declares is produced by some test.
package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/internal/pathroute"
)

// Options configures the middleware for one API.
type Options struct {
	// Spec is the API's OpenAPI document (from the generated GetSwagger).
	Spec *openapi3.T
	// API names the API ("pam", as in specs/<api>/) in the contract coverage
	// record; apiserver sets it.
	API string
	// Authenticate checks one security scheme of an operation; see
	// openapi3filter.AuthenticationFunc. It runs before parameters and body
	// are checked. A nil Authenticate refuses every secured operation.
	Authenticate openapi3filter.AuthenticationFunc
	// ValidateResponses turns response validation on.
	ValidateResponses bool
	// Background, when set, checks responses after sending them, on its
	// bounded pool (the run-time mode of `apistack serve
	// --validate-responses`); nil checks each response before sending it
	// (strict, for tests).
	Background *Background
	// OnResponseViolation is called for every response that breaks the spec.
	// The default logs the violation at error level.
	OnResponseViolation func(r *http.Request, status int, err error)
	// Skip reports requests the middleware lets through unchecked (health
	// checks, the spec itself, the docs page).
	Skip func(r *http.Request) bool
	// StreamedBodies names, by operationId, the operations whose JSON body
	// the handler decodes and checks itself as it reads it, so that a large
	// body is never held whole: the middleware checks everything else of
	// such a request (route, security, parameters) and leaves the body
	// unread. A request whose Content-Type is not one the operation takes,
	// or that has no body, is checked whole, as any other.
	StreamedBodies map[string]bool
}

// recordCoverage notes a pair answered and held to the spec; a variable so
// the package's tests can watch it.
var recordCoverage = contractcoverage.Record

// Kind classifies why a request was refused, so each API can map it onto its
// own error names and statuses.
type Kind int

// The kinds of request failure.
const (
	// KindInvalid: a parameter or the body breaks the schema (400).
	KindInvalid Kind = iota + 1
	// KindUnauthenticated: no security requirement of the operation is met (401).
	KindUnauthenticated
	// KindUnsupportedMediaType: the Content-Type is not one the operation
	// accepts, or the body cannot be decoded as that type (415).
	KindUnsupportedMediaType
	// KindNotFound: no operation has this path (404).
	KindNotFound
	// KindMethodNotAllowed: the path exists but not with this method (405).
	KindMethodNotAllowed
	// KindTooLarge: the body is over the server's size limit (413).
	KindTooLarge
	// KindTimeout: the body did not arrive within the server's read
	// timeout (408).
	KindTimeout
	// KindMalformed: the body did not arrive whole: its chunked framing is
	// malformed, or it ended before its declared length (400, whatever
	// status the API gives a body that breaks the schema).
	KindMalformed
)

// Cause is one reason a request was refused.
type Cause struct {
	// In is where the problem is: "path", "query", "header", "cookie" or "body".
	In string
	// Name is the parameter name, or a JSON pointer into the body ("/key_id").
	Name string
	// Message says what is wrong there.
	Message string
}

// Failure is the error the middleware returns for a refused request. API error
// handlers use errors.As to render it.
type Failure struct {
	Kind    Kind
	Message string
	Causes  []Cause
	// Err is the underlying openapi3filter error (or errors).
	Err error
	// AuthErr is the error the Authenticate function returned, when Kind is
	// KindUnauthenticated; APIs that render distinct authentication errors use it.
	AuthErr error
}

// Error implements error.
func (f *Failure) Error() string { return f.Message }

// Unwrap returns the underlying validation error.
func (f *Failure) Unwrap() error { return f.Err }

// New builds the middleware for one API: Split's two halves in one.
func New(opts Options) (echo.MiddlewareFunc, error) {
	answers, requests, err := Split(opts)
	if err != nil {
		return nil, err
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc { return answers(requests(next)) }, nil
}

// Split builds the middleware for one API in two halves. requests checks
// each request against the spec and has a refused one rendered by the echo
// error handler; answers, to be used before it, buffers each answer and
// (with ValidateResponses) checks it against the spec and records it, first
// rendering with the error handler any error returned to it. The
// middleware placed between the two (credentials resolved, bodies gated or
// read before the request is checked) thus have the answers they refuse a
// request with checked like the handler's, a body that stalled under them
// included.
func Split(opts Options) (answers, requests echo.MiddlewareFunc, err error) {
	RegisterDecoders()
	if opts.Spec == nil {
		return nil, nil, errors.New("validation: Options.Spec is nil")
	}
	router, err := newPathRouter(opts.Spec)
	if err != nil {
		return nil, nil, err
	}
	onViolation := opts.OnResponseViolation
	if onViolation == nil {
		onViolation = func(r *http.Request, status int, err error) {
			slog.ErrorContext(r.Context(), "response breaks the spec",
				"method", r.Method, "path", r.URL.Path, "status", status, "err", err)
		}
	}
	authenticate := opts.Authenticate
	if authenticate == nil {
		authenticate = func(context.Context, *openapi3filter.AuthenticationInput) error {
			return errors.New("no authentication configured")
		}
	}
	filterOpts := &openapi3filter.Options{
		AuthenticationFunc:                authenticate,
		MultiError:                        true,
		KeepValidatedValue:                true,
		RejectWhenRequestBodyNotSpecified: true,
	}
	streamOpts := *filterOpts
	streamOpts.ExcludeRequestBody = true
	checks := compileFastChecks(opts.Spec)
	responseOpts := &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}
	// JSON response bodies are validated by validateJSONResponseBody instead:
	// they come from the server's own encoder, so the strict (and several
	// times slower) request decoder buys nothing there.
	responseOptsNoBody := &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true, ExcludeResponseBody: true}

	requests = func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if opts.Skip != nil && opts.Skip(req) {
				return next(c)
			}
			route, input, herr := validateRequest(req, router, checks, filterOpts, opts.StreamedBodies, &streamOpts)
			if rec, ok := c.Response().Writer.(*recorder); ok {
				rec.route, rec.input, rec.requestChecked = route, input, true
			}
			if herr == nil {
				herr = next(c)
			}
			if herr != nil {
				c.Error(herr)
			}
			return nil
		}
	}
	answers = func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if !opts.ValidateResponses || (opts.Skip != nil && opts.Skip(req)) {
				return next(c)
			}
			rec := newRecorder(c.Response().Writer)
			c.Response().Writer = rec
			if err := next(c); err != nil {
				c.Error(err)
			}
			c.Response().Writer = rec.under
			if !rec.requestChecked && rec.code == 0 && rec.body.Len() == 0 {
				// Refused before its check by a middleware that answered
				// nothing (a sandbox's fault answers it later): nothing to
				// check or send.
				rec.release()
				return nil
			}
			route, input := rec.route, rec.input
			if !rec.requestChecked {
				// Answered by a middleware before the request's check.
				req = c.Request()
				if r, params, err := router.FindRoute(req); err == nil {
					route, input = r, &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: r, Options: filterOpts}
				}
			}
			status := rec.status()
			if req.Method != http.MethodHead && status >= 200 && status != http.StatusNoContent &&
				status != http.StatusNotModified && rec.Header().Get("Content-Length") == "" {
				rec.Header().Set("Content-Length", strconv.Itoa(rec.body.Len()))
			}
			if opts.Background != nil {
				sendErr := rec.flush()
				if route != nil && answered(req, status) {
					opts.Background.checkLater(req, route, input, status, rec.Header(), rec.body.Bytes(), responseOpts, responseOptsNoBody, onViolation)
				}
				rec.release()
				return sendErr
			}
			// Check first, send after: the caller cannot see the end of an
			// answer before its check has reported. An answer to a caller that
			// went away is never read (the log records it as 499): there is
			// nothing to check.
			if route != nil && answered(req, status) {
				value, err := checkResponse(req, route, input, status, rec.Header(), rec.body.Bytes(), responseOpts, responseOptsNoBody)
				if err != nil {
					onViolation(req, status, err)
				} else if err := recordCoverage(opts.API, route.Operation.OperationID, status); err != nil {
					onViolation(req, status, err)
				} else if err := recordFields(opts.API, route.Operation, status, rec.Header(), value, rec.body.Bytes()); err != nil {
					onViolation(req, status, err)
				}
			}
			return rec.flush()
		}
	}
	return answers, requests, nil
}

// answered reports whether the caller reads the answer with this status,
// which is then checked: it has not gone away (the request's context is
// live), or its body stalled past the read timeout. net/http ends the
// request's context as that read fails, yet the 408 is sent, and the caller
// that stalled reads it like any other answer.
func answered(req *http.Request, status int) bool {
	return req.Context().Err() == nil || status == http.StatusRequestTimeout
}

// checkResponse validates one response against its operation: status and
// headers with openapi3filter, a JSON body with validateJSONResponseBody, any
// other body with openapi3filter. It returns the decoded JSON body it
// checked (nil for no body, or one not JSON).
func checkResponse(req *http.Request, route *routers.Route, input *openapi3filter.RequestValidationInput,
	status int, header http.Header, body []byte, withBody, noBody *openapi3filter.Options) (any, error) {
	fastJSON := isJSON(header.Get("Content-Type"))
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input,
		Status:                 status,
		Header:                 header,
		Options:                withBody,
	}
	if fastJSON {
		in.Options = noBody
	}
	in.SetBodyBytes(body)
	err := openapi3filter.ValidateResponse(req.Context(), in)
	if err != nil || !fastJSON {
		return nil, err
	}
	return validateJSONResponseBody(route, status, header.Get("Content-Type"), body)
}

// recordFields notes the declared fields a response held to the spec
// carries (contractcoverage.RecordFields); a variable so the package's tests
// can watch it.
var recordFields = contractcoverage.RecordFields

// validateJSONResponseBody checks a JSON response body against the schema
// of its status and content type, as openapi3filter.ValidateResponse does,
// decoding it in one pass (decodeJSON). Status and headers are checked
// by ValidateResponse beforehand.
func validateJSONResponseBody(route *routers.Route, status int, contentType string, body []byte) (any, error) {
	responses := route.Operation.Responses
	if responses.Len() == 0 {
		return nil, nil
	}
	ref := responses.Status(status)
	if ref == nil {
		ref = responses.Default()
	}
	if ref == nil || ref.Value == nil || len(ref.Value.Content) == 0 {
		return nil, nil
	}
	mt := ref.Value.Content.Get(contentType)
	if mt == nil {
		return nil, fmt.Errorf("response Content-Type %q is not declared for status %d", contentType, status)
	}
	if mt.Schema == nil || mt.Schema.Value == nil {
		return nil, nil
	}
	value, err := decodeJSON(body)
	if err != nil {
		return nil, fmt.Errorf("response body is not JSON: %w", err)
	}
	if err := mt.Schema.Value.VisitJSON(value, openapi3.MultiErrors(), openapi3.VisitAsResponse()); err != nil {
		return nil, fmt.Errorf("response body doesn't match schema: %w", err)
	}
	return value, nil
}

// validateRequest finds the operation of req and validates req against it:
// with the operation's compiled check when it admits req (fastChecks), with
// openapi3filter otherwise. On success it leaves the canonical encoding of
// the validated JSON body in req.Body.
func validateRequest(req *http.Request, router routers.Router, checks fastChecks, opts *openapi3filter.Options,
	streamed map[string]bool, streamOpts *openapi3filter.Options) (*routers.Route, *openapi3filter.RequestValidationInput, error) {
	route, pathParams, err := router.FindRoute(req)
	if err != nil {
		return nil, nil, routeFailure(req, err)
	}
	if fc := checks[route.Operation]; fc != nil {
		if input, ok := fc.admit(req, route, pathParams, opts); ok {
			return route, input, nil
		}
	}
	streaming := streamed[route.Operation.OperationID] && streamsBody(req, route.Operation)
	if streaming {
		// openapi3filter reads the whole body before it checks security,
		// even when told to leave the body out: it is set aside meanwhile.
		opts = streamOpts
		body, length := req.Body, req.ContentLength
		req.Body, req.ContentLength = http.NoBody, 0
		defer func() { req.Body, req.ContentLength = body, length }()
	}
	input := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: pathParams,
		Route:      route,
		Options:    opts,
	}
	// openapi3filter writes the defaults of absent parameters into the
	// query (an empty value counts as absent): look at the query as sent.
	rawQuery := req.URL.RawQuery
	if err := openapi3filter.ValidateRequest(req.Context(), input); err != nil {
		return route, input, classify(err)
	}
	if f := queryShapeFailure(rawQuery, route); f != nil {
		return route, input, f
	}
	if streaming {
		return route, input, nil
	}
	if err := canonicalizeBody(req); err != nil {
		return route, input, &Failure{Kind: KindInvalid, Message: "the request body cannot be re-encoded", Err: err}
	}
	return route, input, nil
}

// queryShapeFailure refuses what openapi3filter lets through in a query: a
// declared parameter given an empty value its spec does not allow
// (openapi3filter reads "?count=" as no count at all), and a parameter that
// is not an array given more than once (openapi3filter checks the first value
// only, and the handler may read another).
func queryShapeFailure(rawQuery string, route *routers.Route) *Failure {
	if rawQuery == "" {
		return nil
	}
	query, _ := url.ParseQuery(rawQuery) // what does not parse, openapi3filter refused
	var causes []Cause
	check := func(params openapi3.Parameters) {
		for _, ref := range params {
			prm := ref.Value
			if prm == nil || prm.In != openapi3.ParameterInQuery {
				continue
			}
			values, ok := query[prm.Name]
			if !ok || (prm.Schema != nil && prm.Schema.Value != nil && prm.Schema.Value.Type.Is(openapi3.TypeArray)) {
				continue
			}
			switch {
			case len(values) > 1:
				causes = append(causes, Cause{In: "query", Name: prm.Name,
					Message: fmt.Sprintf("given %d times; it takes one value", len(values))})
			case values[0] == "" && !prm.AllowEmptyValue:
				causes = append(causes, Cause{In: "query", Name: prm.Name, Message: "an empty value is not allowed"})
			}
		}
	}
	check(route.PathItem.Parameters)
	check(route.Operation.Parameters)
	if len(causes) == 0 {
		return nil
	}
	return &Failure{Kind: KindInvalid, Message: summarize(causes), Causes: causes}
}

func routeFailure(req *http.Request, err error) error {
	var rerr *routers.RouteError
	if errors.As(err, &rerr) && errors.Is(rerr, routers.ErrMethodNotAllowed) {
		return &Failure{Kind: KindMethodNotAllowed, Message: fmt.Sprintf("%s is not allowed on %s", req.Method, req.URL.Path), Err: err}
	}
	return &Failure{Kind: KindNotFound, Message: fmt.Sprintf("no operation at %s %s", req.Method, req.URL.Path), Err: err}
}

// streamsBody reports whether the handler of op may read req's body
// itself: a JSON body of a Content-Type op takes. Anything else is checked
// whole, so that it is refused as it always was.
func streamsBody(req *http.Request, op *openapi3.Operation) bool {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0 || op.RequestBody == nil || op.RequestBody.Value == nil {
		return false
	}
	ct := req.Header.Get("Content-Type")
	return isJSON(ct) && op.RequestBody.Value.GetMediaType(ct) != nil
}

// canonicalizeBody replaces a validated JSON body with the encoding of the
// value the validator checked.
func canonicalizeBody(req *http.Request) error {
	vb, ok := req.Body.(interface{ ValidatedValue() any })
	if !ok || !isJSON(req.Header.Get("Content-Type")) {
		return nil
	}
	data, err := json.Marshal(vb.ValidatedValue())
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(data))
	req.ContentLength = int64(len(data))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return nil
}

func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// classify turns openapi3filter's errors into one Failure.
func classify(err error) *Failure {
	errs := []error{err}
	if me, ok := err.(openapi3.MultiError); ok {
		errs = flatten(me)
	}
	f := &Failure{Kind: KindInvalid, Err: err}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &Failure{Kind: KindTooLarge, Err: err,
			Message: fmt.Sprintf("the request body is over the limit of %d bytes", tooLarge.Limit)}
	}
	for _, e := range errs {
		var serr *openapi3filter.SecurityRequirementsError
		if errors.As(e, &serr) {
			f.Kind = KindUnauthenticated
			f.Message = "authentication required"
			if len(serr.Errors) > 0 {
				f.AuthErr = serr.Errors[0]
				f.Message = serr.Errors[0].Error()
			}
			f.Causes = []Cause{{In: "header", Name: "Authorization", Message: f.Message}}
			return f
		}
	}
	for _, e := range errs {
		var rerr *openapi3filter.RequestError
		if !errors.As(e, &rerr) {
			f.Causes = append(f.Causes, Cause{In: "body", Name: "", Message: e.Error()})
			continue
		}
		switch {
		case rerr.RequestBody != nil && strings.HasPrefix(rerr.Reason, "header Content-Type has unexpected value"):
			return &Failure{Kind: KindUnsupportedMediaType, Err: err,
				Message: fmt.Sprintf("Content-Type %q is not accepted here", rerr.Input.Request.Header.Get("Content-Type")),
				Causes:  []Cause{{In: "header", Name: "Content-Type", Message: "unsupported content type"}}}
		case rerr.RequestBody != nil && rerr.Reason == "failed to decode request body" && isJSON(rerr.Input.Request.Header.Get("Content-Type")):
			// A JSON content type with a body that is not JSON: the body is
			// invalid (400), its type is the one accepted.
			return &Failure{Kind: KindInvalid, Err: err,
				Message: "the request body is not valid JSON: " + rootMessage(rerr.Err),
				Causes:  []Cause{{In: "body", Name: "", Message: rootMessage(rerr.Err)}}}
		case rerr.RequestBody != nil && (rerr.Reason == "failed to decode request body" || strings.HasPrefix(rerr.Reason, "unsupported content type")):
			return &Failure{Kind: KindUnsupportedMediaType, Err: err,
				Message: "the request body cannot be decoded: " + rootMessage(rerr.Err),
				Causes:  []Cause{{In: "body", Name: "", Message: rootMessage(rerr.Err)}}}
		}
		f.Causes = append(f.Causes, causesOf(rerr)...)
	}
	f.Message = summarize(f.Causes)
	return f
}

func flatten(me openapi3.MultiError) []error {
	var out []error
	for _, e := range me {
		// Only a MultiError at this level is a list of failures; one found by
		// unwrapping belongs to the RequestError around it.
		if inner, ok := e.(openapi3.MultiError); ok {
			out = append(out, flatten(inner)...)
			continue
		}
		out = append(out, e)
	}
	return out
}

// causesOf explains one RequestError, one cause per schema violation.
func causesOf(rerr *openapi3filter.RequestError) []Cause {
	in, name := "body", ""
	if rerr.Parameter != nil {
		in, name = rerr.Parameter.In, rerr.Parameter.Name
	}
	var schemaErrs []*openapi3.SchemaError
	collectSchemaErrors(rerr.Err, &schemaErrs)
	if len(schemaErrs) == 0 {
		msg := rerr.Reason
		if rerr.Err != nil {
			msg = rootMessage(rerr.Err)
		}
		if msg == "" {
			msg = rerr.Error()
		}
		if in == "body" && errors.Is(rerr.Err, openapi3filter.ErrInvalidRequired) {
			msg = "a request body is required"
		}
		return []Cause{{In: in, Name: name, Message: msg}}
	}
	causes := make([]Cause, 0, len(schemaErrs))
	for _, se := range schemaErrs {
		loc := name
		if in == "body" {
			loc = "/" + strings.Join(se.JSONPointer(), "/")
		}
		causes = append(causes, Cause{In: in, Name: loc, Message: se.Reason})
	}
	return causes
}

func collectSchemaErrors(err error, out *[]*openapi3.SchemaError) {
	if err == nil {
		return
	}
	var me openapi3.MultiError
	if errors.As(err, &me) {
		for _, e := range me {
			collectSchemaErrors(e, out)
		}
		return
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		*out = append(*out, se)
	}
}

// rootMessage is the innermost message of err, without kin-openapi's wrapping.
func rootMessage(err error) string {
	if err == nil {
		return ""
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

func summarize(causes []Cause) string {
	if len(causes) == 0 {
		return "the request is invalid"
	}
	parts := make([]string, 0, len(causes))
	for _, c := range causes {
		where := c.In
		if c.Name != "" {
			where += " " + c.Name
		}
		parts = append(parts, where+": "+c.Message)
	}
	return "invalid request: " + strings.Join(parts, "; ")
}

// pathRouters memoizes newPathRouter per spec: the servers share each
// API's parsed spec (apiserver.Spec), and the test kit builds every API's
// server per test. A router is only read once built.
var pathRouters sync.Map // *openapi3.T -> routers.Router

// newPathRouter returns the router of spec (see pathroute.New), built
// once per spec.
func newPathRouter(spec *openapi3.T) (routers.Router, error) {
	if r, ok := pathRouters.Load(spec); ok {
		return r.(routers.Router), nil
	}
	r, err := pathroute.New(spec)
	if err != nil {
		return nil, err
	}
	actual, _ := pathRouters.LoadOrStore(spec, r)
	return actual.(routers.Router), nil
}

// recorder buffers a response so it can be validated before it is sent. It
// shares the header map of the writer beneath, so headers set by middleware
// before the handler ran are validated too.
type recorder struct {
	under http.ResponseWriter
	code  int
	body  bytes.Buffer
	// route and input are the request's operation and its check, set by
	// Split's requests half when it ran (requestChecked).
	route          *routers.Route
	input          *openapi3filter.RequestValidationInput
	requestChecked bool
}

func newRecorder(w http.ResponseWriter) *recorder {
	r := recorders.Get().(*recorder)
	r.under = w
	return r
}

// recorders keeps recorders, and the buffers they grew, for the next
// responses: a buffered answer otherwise costs its growth every time.
var recorders = sync.Pool{New: func() any { return new(recorder) }}

// release returns the recorder to the pool once nothing refers to its
// buffer (the background check keeps a copy of what it needs).
func (r *recorder) release() {
	if r.body.Cap() > 1<<20 {
		return // an unusually large answer: let it go
	}
	r.under, r.code = nil, 0
	r.route, r.input, r.requestChecked = nil, nil, false
	r.body.Reset()
	recorders.Put(r)
}

func (r *recorder) Header() http.Header { return r.under.Header() }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(p)
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// flush sends the buffered response.
func (r *recorder) flush() error {
	r.under.WriteHeader(r.status())
	_, err := r.under.Write(r.body.Bytes())
	return err
}
