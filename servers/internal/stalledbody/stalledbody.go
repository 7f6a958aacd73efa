// Package stalledbody is the servers' tests' check of the answer to a
// request body that stalls: for every operation of an API's spec that takes a
// request body, it sends the request's head and the start of its body over
// real HTTP, to the API's handler served with a short read timeout, then
// sends nothing more, and holds the answer the server gives once its read
// timeout passes to the API's documented 408. The API's handler checks that
// answer against the spec and records it for the contract coverage, as it
// does every answer.
package stalledbody

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReadTimeout is the read timeout of the server Run starts: a stalled body
// is answered once it passes.
const ReadTimeout = time.Second

// DeclaredLength is the Content-Length each stalled request announces; Run
// sends only the start of it.
const DeclaredLength = 4096

// Operation is one operation that takes a request body.
type Operation struct {
	// ID is its operationId.
	ID string
	// Method and Path are its method and path template (as in the spec:
	// "/v1/teams/{team_name}").
	Method, Path string
	// ContentType is the request body's media type Run sends (the first
	// of the declared ones in order, application/json first).
	ContentType string
}

// Operations lists every operation of spec that takes a request body, by
// operationId.
func Operations(spec *openapi3.T) []Operation {
	var ops []Operation
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil || len(op.RequestBody.Value.Content) == 0 {
				continue
			}
			types := make([]string, 0, len(op.RequestBody.Value.Content))
			for ct := range op.RequestBody.Value.Content {
				types = append(types, ct)
			}
			sort.Slice(types, func(i, j int) bool {
				if (types[i] == "application/json") != (types[j] == "application/json") {
					return types[i] == "application/json"
				}
				return types[i] < types[j]
			})
			ops = append(ops, Operation{ID: op.OperationID, Method: method, Path: path, ContentType: types[0]})
		}
	}
	slices.SortFunc(ops, func(a, b Operation) int { return strings.Compare(a.ID, b.ID) })
	return ops
}

// Target is one API under test.
type Target struct {
	// Spec loads the API's OpenAPI document (the generated server
	// package's GetSpec).
	Spec func() (*openapi3.T, error)
	// Handler returns the API's HTTP handler, with response validation on
	// (a violation fails the test) as the API's test harness builds it
	// (the server's Handler method).
	Handler func() (http.Handler, error)
	// PathValues gives each path parameter of the operations its value
	// (existing entities, so that nothing but the body could be refused);
	// a parameter it does not name fails the test.
	PathValues map[string]string
	// Bearer, when set and Authorize is nil, is the token every request
	// sends in its Authorization header.
	Bearer string
	// Authorize sets the credentials of op's request, which has its head
	// complete, Content-Length DeclaredLength included; nil sends Bearer's
	// (none when it is empty).
	Authorize func(t *testing.T, op Operation, req *http.Request)
	// CheckBody holds the answer's body to the API's documented 408 error
	// body (its code, its message).
	CheckBody func(t *testing.T, op Operation, header http.Header, body []byte)
}

// Run sends every operation of target that takes a request body a body
// that stalls, each in its own parallel subtest named by its operationId,
// and asserts the answer: 408, in the API's error body, naming no socket
// address or internal error. It fails when the spec has no such operation.
func Run(t *testing.T, target Target) {
	t.Helper()
	spec, err := target.Spec()
	require.NoError(t, err)
	handler, err := target.Handler()
	require.NoError(t, err)
	ops := Operations(spec)
	require.NotEmpty(t, ops, "the spec has no operation that takes a request body")
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ReadTimeout = ReadTimeout
	srv.Start()
	t.Cleanup(srv.Close)
	for _, op := range ops {
		t.Run(op.ID, func(t *testing.T) {
			t.Parallel()
			status, header, body := Send(t, srv.URL, target, op)
			require.Equal(t, http.StatusRequestTimeout, status, "%s %s: %s", op.Method, op.Path, body)
			assert.NotContains(t, string(body), "127.0.0.1", "no socket address in the body")
			assert.NotContains(t, string(body), "i/o timeout", "no internal error in the body")
			assert.Contains(t, string(body), "read timeout", "the body says what happened")
			target.CheckBody(t, op, header, body)
		})
	}
}

// DecodeJSON decodes body, an answer's JSON error body, into a T; a body
// that is not one fails t.
func DecodeJSON[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(body, &v), string(body))
	return v
}

// Send sends op's request to baseURL with the start of a body of
// DeclaredLength bytes and then nothing more, until the answer came; it
// returns the answer's status, header and body.
func Send(t *testing.T, baseURL string, target Target, op Operation) (int, http.Header, []byte) {
	t.Helper()
	path, err := expand(op.Path, target.PathValues)
	require.NoError(t, err)
	body := &stallingBody{start: []byte(bodyStart(op.ContentType)), release: make(chan struct{})}
	defer close(body.release)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, op.Method, baseURL+path, body)
	require.NoError(t, err)
	req.ContentLength = DeclaredLength
	req.Header.Set("Content-Type", op.ContentType)
	switch {
	case target.Authorize != nil:
		target.Authorize(t, op, req)
	case target.Bearer != "":
		req.Header.Set("Authorization", "Bearer "+target.Bearer)
	}
	// A connection of its own: the server closes it with the answer.
	transport := &http.Transport{DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, data
}

// bodyStart is the start of a body of the media type: the server has read
// something of the body when it stalls.
func bodyStart(contentType string) string {
	switch {
	case strings.Contains(contentType, "json"):
		return `{"name": "`
	case strings.Contains(contentType, "xml"):
		return `<?xml version="1.0" encoding="UTF-8"?>`
	case contentType == "application/x-www-form-urlencoded":
		return "name="
	default:
		return "--"
	}
}

// expand fills the path template's parameters from values.
func expand(template string, values map[string]string) (string, error) {
	var b strings.Builder
	rest := template
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return "", errors.New("stalledbody: unclosed parameter in " + template)
		}
		name := rest[open+1 : open+end]
		value, ok := values[name]
		if !ok {
			return "", errors.New("stalledbody: no value for the path parameter " + name + " of " + template)
		}
		b.WriteString(rest[:open])
		b.WriteString(url.PathEscape(value))
		rest = rest[open+end+1:]
	}
}

// stallingBody yields start, then blocks until release is closed (the
// answer came), and then fails: the body never arrives whole.
type stallingBody struct {
	start   []byte
	sent    bool
	release chan struct{}
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, b.start), nil
	}
	<-b.release
	return 0, errStalled
}

var errStalled = errors.New("stalledbody: the body stalled on purpose")
