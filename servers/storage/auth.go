package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/clients/storage/sigv4"
	"github.com/apistack/apistack/servers/storage/lifecycledoc"
)

// requestState is what the server learns about a request before routing: its
// id, and the host and path it was sent to (and signed with) before a
// virtual-host-style address was rewritten to path style.
type requestState struct {
	id   string
	host string
	path string
}

type requestStateKey struct{}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestStateKey{}).(*requestState)
	return st
}

// requestID returns the id of the request ctx belongs to.
func requestID(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.id
	}
	return newRequestID()
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return strings.ToUpper(hex.EncodeToString(b))
}

// addressing gives the request its id and rewrites a virtual-host-style
// address, {bucket}.{region}.{domain}/..., to path style, /{bucket}/..., so
// that one route serves both; the original host and path are kept for the
// signature check, which covers the request as it was sent.
func (s *Server) addressing(next echo.HandlerFunc) echo.HandlerFunc {
	suffix := "." + s.cfg.Region + "." + s.cfg.Domain
	return func(c echo.Context) error {
		req := c.Request()
		st := &requestState{id: newRequestID(), host: req.Host, path: req.URL.Path}
		c.Response().Header().Set("X-Cloud-Request-Id", st.id)
		host := req.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if bucket, ok := strings.CutSuffix(strings.ToLower(host), suffix); ok && bucket != "" {
			path := req.URL.Path
			// The service description's sample puts the bucket in both the host
			// and the path; that path names the same bucket.
			if path == "" || path == "/" || path == "/"+bucket {
				path = ""
			}
			req.URL.Path = "/" + bucket + path
			req.URL.RawPath = ""
		}
		req = req.WithContext(context.WithValue(req.Context(), requestStateKey{}, st))
		c.SetRequest(req)
		return next(c)
	}
}

// authenticate is the spec's security check of the cloud4 scheme: it verifies
// the request's CLOUD4-HMAC-SHA256 signature against the host and path the
// request was sent to, with the body's SHA-256. Its errors are *sigv4.Error
// (each with its object-storage code), or MalformedXML for a body over the
// size limit.
func (s *Server) authenticate(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	req := in.RequestValidationInput.Request
	body, err := readBody(req)
	if err != nil {
		return err
	}
	host, path := req.Host, req.URL.Path
	if st := stateFrom(req.Context()); st != nil {
		host, path = st.host, st.path
	}
	_, err = s.verifier.Verify(ctx, sigv4.Request{
		Method: req.Method,
		Host:   host,
		Path:   path,
		Query:  req.URL.Query(),
		Header: req.Header,
	}, sigv4.HashHex(body), s.now())
	return err
}

// readBody reads the request body (capped by the server's body limit) and puts
// it back for the validation and the handler that read it next.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, lifecycledoc.TooLarge()
		}
		return nil, fmt.Errorf("storage: reading the body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}
