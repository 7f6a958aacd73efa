// Package replay lets a RoundTripper read a request's body (to validate it,
// sign it, or send it a second time) and still send the request: the body is
// read once, and each clone that goes out carries it again, re-readable
// through GetBody.
package replay

import (
	"bytes"
	"io"
	"net/http"
)

// ReadBody reads and closes req's body, as a RoundTripper must; nil when the
// request has none.
func ReadBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// WithBody returns a clone of req whose body is body, with ContentLength and
// GetBody to match (http.NoBody when body is empty).
func WithBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	if len(body) == 0 {
		r.Body, r.ContentLength = http.NoBody, 0
		r.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
		return r
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r
}
