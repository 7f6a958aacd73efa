package apiserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/servers/internal/redact"
	"github.com/apistack/apistack/servers/internal/validation"
)

// JournalBodyCap is the most bytes of a request's or a response's body a
// journal entry keeps (the sandbox API's documented cap).
const JournalBodyCap = 16 << 10

// Redacted replaces the value of every secret a journal entry would show.
const Redacted = "[redacted]"

// Journal keeps the requests made with the credentials of the tenant sets
// it journals (the sandboxes): servers/sandbox.
type Journal interface {
	// Journals reports whether the requests of the tenant set named set are
	// kept.
	Journals(set string) bool
	// Now is the time a request is recorded as arriving at.
	Now() time.Time
	// Record keeps e, returning once it is stored (or could not be: the
	// journal logs that), so a caller who read the response finds it. The
	// journal owns e from then on: it redacts e's secrets before it stores
	// or shows e (Redact, or SecretHeader and RedactBody), off the request's
	// path, and calls Release once it no longer reads e's bodies.
	Record(ctx context.Context, e JournalEntry)
}

// JournalEntry is one request made with a journaled tenant set's
// credentials and its answer, bodies capped at JournalBodyCap. As Record
// gets it, its secrets are NOT yet redacted (Redact).
type JournalEntry struct {
	// Set is the tenant set whose credentials made the request.
	Set                                 string
	API, Operation, Method, Path, Query string
	Status                              int
	// Time is when the request arrived, on the stack's clock (wall time).
	Time time.Time
	// SetTime is the same instant on the tenant set's own clock (a
	// sandbox's), filled in by the journal.
	SetTime  time.Time
	Duration time.Duration
	// RequestHeaders and ResponseHeaders are, as Record gets them, the
	// request's and the response's own header maps (nothing changes them
	// once the response is written): read them, never change them.
	RequestHeaders, ResponseHeaders http.Header
	// RequestBody and ResponseBody are what was read and written, up to
	// JournalBodyCap bytes; as Record gets them, they are held in buffers
	// that Release hands to later requests.
	RequestBody, ResponseBody           []byte
	RequestTruncated, ResponseTruncated bool
	// Violations are the causes of the request's validation failure: where
	// (In: query, header, path, body; Name: the parameter or a JSON pointer
	// into the body) and the rule broken (Message). Empty when the request
	// kept to its spec.
	Violations []validation.Cause

	// bufs are the pooled buffers the bodies were captured in (Release).
	bufs [2]*bodyBuffer
}

// Redact replaces e's headers and bodies by copies with every secret
// redacted (RedactHeaders, RedactBody), for a journal that keeps e as it
// is; the copies need no Release.
func (e *JournalEntry) Redact() {
	e.RequestHeaders, e.ResponseHeaders = RedactHeaders(e.RequestHeaders), RedactHeaders(e.ResponseHeaders)
	e.RequestBody, e.ResponseBody = bytes.Clone(RedactBody(e.RequestBody)), bytes.Clone(RedactBody(e.ResponseBody))
	e.Query = RedactQuery(e.Query)
	e.Release()
}

// Release hands the buffers e's bodies were captured in to later requests'
// captures: once it is called, e's bodies must not be read (unless Redact
// copied them). Call it once, when e's bodies are stored; an entry never
// released is left to the garbage collector.
func (e *JournalEntry) Release() {
	for i, b := range e.bufs {
		b.release()
		e.bufs[i] = nil
	}
}

// bodyBuffer holds a captured body; bodyBuffers keeps them between
// requests (most journaled requests' bodies fit in the first one's
// capacity), so that capturing costs no allocation.
type bodyBuffer struct{ b []byte }

var bodyBuffers = sync.Pool{New: func() any { return &bodyBuffer{b: make([]byte, 0, 4<<10)} }}

func (b *bodyBuffer) release() {
	if b == nil || cap(b.b) > JournalBodyCap {
		return
	}
	b.b = b.b[:0]
	bodyBuffers.Put(b)
}

// appendCapped appends p to the body captured in *b (taking a buffer from
// bodyBuffers first), keeping the first JournalBodyCap bytes, and reports
// whether the body was cut.
func appendCapped(b **bodyBuffer, p []byte, cut bool) bool {
	if *b == nil {
		*b = bodyBuffers.Get().(*bodyBuffer)
	}
	buf := *b
	if room := JournalBodyCap - len(buf.b); room < len(p) {
		buf.b = append(buf.b, p[:max(room, 0)]...)
		return true
	}
	buf.b = append(buf.b, p...)
	return cut
}

// bodyOf is the body captured in b (nil when none was).
func bodyOf(b *bodyBuffer) []byte {
	if b == nil {
		return nil
	}
	return b.b
}

// Attribute tells the journal that the request of ctx was made with the
// credentials of the tenant set named set: each API's authentication calls
// it once it knows whose credentials they are. It does nothing outside a
// journaled request.
//
// A journal that is a FaultTaker is offered the request then: a fault of
// set that takes it holds it (slow) or has it answered in its stead.
func Attribute(ctx context.Context, set string) {
	jc, _ := ctx.Value(journalKey{}).(*journalCapture)
	if jc == nil || set == "" {
		return
	}
	if jc.journal.Journals(set) {
		jc.set = set
	}
	jc.takeFault(ctx, set)
}

type journalKey struct{}

// journalCapture is what the journal middleware learns of one request.
type journalCapture struct {
	journal Journal
	// set is the journaled tenant set the request was attributed to; ""
	// until (unless) it is.
	set               string
	reqBody, respBody *bodyBuffer
	reqCut, respCut   bool
	// violations are those of the request's validation failure, noted as
	// the error handler renders it (noteViolations).
	violations []validation.Cause

	// The request's faults (FaultTaker): api and operation describe the
	// request; offered is set once it was offered to taker; fault is the
	// one that took it, muted whether what the API writes is held back.
	api       string
	operation func() string
	taker     FaultTaker
	offered   bool
	fault     InjectedFault
	muted     bool
	// unanswered: the fault answered nothing (it dropped the connection).
	unanswered bool
}

// noteViolations notes, in a journaled request's capture, the violations of
// the validation failure handler is about to render.
func noteViolations(handler echo.HTTPErrorHandler) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		var failure *validation.Failure
		if jc, _ := c.Request().Context().Value(journalKey{}).(*journalCapture); jc != nil && errors.As(err, &failure) {
			jc.violations = violationsOf(failure)
		}
		handler(err, c)
	}
}

// teeBody keeps the first JournalBodyCap bytes read from a request body (the
// set is often known only once the body is read: a token exchange).
type teeBody struct {
	io.ReadCloser
	jc *journalCapture
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.jc.reqCut = appendCapped(&t.jc.reqBody, p[:n], t.jc.reqCut)
	}
	return n, err
}

// journalWriter keeps the first JournalBodyCap bytes of a response whose
// request is attributed to a journaled set by the time it is written.
type journalWriter struct {
	http.ResponseWriter
	jc *journalCapture
}

func (w *journalWriter) Write(p []byte) (int, error) {
	if w.jc.muted {
		return len(p), nil
	}
	if w.jc.set != "" {
		w.jc.respCut = appendCapped(&w.jc.respBody, p, w.jc.respCut)
	}
	return w.ResponseWriter.Write(p)
}

// WriteHeader passes the status on, unless a fault took the request.
func (w *journalWriter) WriteHeader(status int) {
	if !w.jc.muted {
		w.ResponseWriter.WriteHeader(status)
	}
}

// Flush passes a flush on when the writer underneath can.
func (w *journalWriter) Flush() {
	if w.jc.muted {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *journalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// journal is the middleware that records, in j, each request attributed to
// a journaled set (Attribute): it runs outside everything that reads the
// body or writes the answer, and stores the entry before the response ends.
func journal(j Journal, api string, router routers.Router) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if isCommonPath(req.URL.Path) {
				return next(c)
			}
			start, at := time.Now(), j.Now()
			jc := &journalCapture{journal: j, api: api, operation: func() string { return operationOf(c, router, req) }}
			jc.taker, _ = j.(FaultTaker)
			tracked := req.WithContext(context.WithValue(req.Context(), journalKey{}, jc))
			if req.Body != nil && req.Body != http.NoBody {
				tracked.Body = &teeBody{ReadCloser: req.Body, jc: jc}
			}
			c.SetRequest(tracked)
			resp := c.Response()
			plain := resp.Writer
			resp.Writer = &journalWriter{ResponseWriter: plain, jc: jc}
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			resp.Writer = plain
			if jc.fault != nil {
				answerFault(c, jc)
			}
			if jc.set == "" { // and so no fault took it: faults take the requests of a set
				jc.reqBody.release()
				jc.respBody.release()
				return nil
			}
			op := operationOf(c, router, req)
			// The headers and bodies go to the journal as they are: it
			// redacts them off the request's path (JournalEntry).
			j.Record(req.Context(), JournalEntry{
				Set: jc.set, API: api, Operation: op, Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
				Status: jc.status(c), Time: at, Duration: time.Since(start),
				RequestHeaders: req.Header, ResponseHeaders: resp.Header(),
				RequestBody: bodyOf(jc.reqBody), RequestTruncated: jc.reqCut,
				ResponseBody: bodyOf(jc.respBody), ResponseTruncated: jc.respCut,
				Violations: jc.violations, bufs: [2]*bodyBuffer{jc.reqBody, jc.respBody},
			})
			dropFaulted(c, jc)
			return nil
		}
	}
}

// violationsOf lists the causes of a request's validation failure: those
// of a broken schema or rule, an unsupported body and an over-large one
// (not a failed authentication: that is no spec violation).
func violationsOf(f *validation.Failure) []validation.Cause {
	if f.Kind == validation.KindUnauthenticated || f.Kind == validation.KindTimeout {
		return nil
	}
	if len(f.Causes) == 0 {
		in := "body"
		switch f.Kind {
		case validation.KindNotFound, validation.KindMethodNotAllowed:
			in = "path"
		case validation.KindUnsupportedMediaType:
			in = "header"
		}
		return []validation.Cause{{In: in, Message: f.Message}}
	}
	return append([]validation.Cause(nil), f.Causes...)
}

// operationOf is the operationId of req: as the body gate found it, or
// looked up.
func operationOf(c echo.Context, router routers.Router, req *http.Request) string {
	if op, routed := c.Get(operationKey).(string); routed {
		return op
	}
	if route, _, err := router.FindRoute(req); err == nil {
		return route.Operation.OperationID
	}
	return ""
}

// secretHeaders are the headers whose values are always redacted.
var secretHeaders = map[string]bool{
	"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "Set-Cookie": true,
	"X-Api-Key": true, "X-Amz-Security-Token": true,
}

// secretWords mark a header or a JSON field as a secret when its name
// holds one of them.
var secretWords = []string{"signature", "token", "secret", "key", "password"}

func secretName(name string) bool {
	return hasSecretWord(name)
}

// SecretHeader reports whether the values of the header named name are
// secrets, which RedactHeaders replaces by Redacted.
func SecretHeader(name string) bool {
	return secretHeaders[http.CanonicalHeaderKey(name)] || secretName(name)
}

// hasSecretWord reports whether s holds one of secretWords, in any case of
// ASCII letters, without copying s: it runs on every journaled request's
// header names and bodies. Most bytes start no word (secretStarts).
func hasSecretWord[S string | []byte](s S) bool {
	for i := 0; i < len(s); i++ {
		m := secretStarts[s[i]]
		if m == 0 {
			continue
		}
		for k, w := range secretWords {
			if m&(1<<k) != 0 && len(s)-i >= len(w) && foldEqualsLower(s[i+1:i+len(w)], w[1:]) {
				return true
			}
		}
	}
	return false
}

// secretStarts maps a byte to the set (bit k: secretWords[k]) of secret
// words it starts, in either case.
var secretStarts = func() (t [256]uint8) {
	for k, w := range secretWords {
		t[w[0]] |= 1 << k
		t[w[0]-'a'+'A'] |= 1 << k
	}
	return t
}()

// foldEqualsLower reports whether s equals the lower-case ASCII word w
// regardless of the case of s's letters.
func foldEqualsLower[S string | []byte](s S, w string) bool {
	for k := 0; k < len(w); k++ {
		c := s[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[k] {
			return false
		}
	}
	return true
}

// RedactHeaders returns a copy of h with the value of every secret header
// replaced by Redacted.
func RedactHeaders(h http.Header) http.Header {
	n := 0
	for _, values := range h {
		n += len(values)
	}
	// One array holds every value of the copy: two allocations, not one
	// per header.
	all := make([]string, 0, n)
	out := make(http.Header, len(h))
	for name, values := range h {
		if SecretHeader(name) {
			values = redactedValue
		}
		start := len(all)
		all = append(all, values...)
		out[name] = all[start:len(all):len(all)]
	}
	return out
}

var redactedValue = []string{Redacted}

// isIdentifierField names the fields that say "key" but are no secret: a
// key's id is how a caller refers to it.
func isIdentifierField(name string) bool {
	switch redact.Fold(name) {
	case "key_id", "keyid", "tokentype", "token_type", "key_expires_at", "expires_at", "keys", "pagetoken", "page_token":
		return true
	}
	return false
}
