package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Request is one HTTP request a test sends to a server it started.
type Request struct {
	// Method and URL are the request's.
	Method, URL string
	// Token, when not empty, is sent as the bearer credentials.
	Token string
	// Body is sent as it is with ContentType (nil: no body).
	Body        io.Reader
	ContentType string
	// ContentLength, when not 0, is the length announced (-1: unknown).
	ContentLength int64
	// Header holds more headers, as name-value pairs.
	Header []string
	// Client sends it (http.DefaultClient when nil).
	Client *http.Client
}

// JSON returns r with v, as JSON, for its body.
func (r Request) JSON(v any) Request {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // a test's own value: a programming error
	}
	r.Body, r.ContentType = bytes.NewReader(data), "application/json"
	return r
}

// Form returns r with the form values for its body.
func (r Request) Form(values url.Values) Request {
	r.Body, r.ContentType = strings.NewReader(values.Encode()), "application/x-www-form-urlencoded"
	return r
}

// Send sends the request and returns the answer with its body read whole
// (and closed).
func (r Request) Send(ctx context.Context) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, r.Body)
	if err != nil {
		return nil, nil, err
	}
	if r.ContentLength != 0 {
		req.ContentLength = r.ContentLength
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	for i := 0; i+1 < len(r.Header); i += 2 {
		req.Header.Set(r.Header[i], r.Header[i+1])
	}
	c := r.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}

// Do is Send that fails t on an error.
func (r Request) Do(t testing.TB) (*http.Response, []byte) {
	t.Helper()
	resp, data, err := r.Send(context.Background())
	require.NoError(t, err, "%s %s", r.Method, r.URL)
	return resp, data
}

// ReadAnswer returns the status and the whole body (closed) of the answer a
// raw generated client (ClientInterface) returned with err.
func ReadAnswer(resp *http.Response, err error) (int, []byte, error) {
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}
