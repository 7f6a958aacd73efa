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

	"github.com/apistack/apistack/internal/lifecycledoc"
	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// requestState is what the server learns about a request before routing: its
// id, and the host and path it was sent to (and signed with) before a
// virtual-host-style address was rewritten to path style.
type requestState struct {
	id   string
	host string
	path string
	// authErr is the outcome of authenticateFirst: nil for a request whose
	// signature and body hash are good.
	authErr error
	// account is the account of the key that signed, once the signature is good.
	account string
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
		// S3 accepts a slash after the bucket, and the JavaScript SDK v3 sends
		// one with path-style addressing (PUT /bucket/?lifecycle=): route a
		// bucket subresource /{bucket}/?… as /{bucket}?…. Only with a query,
		// so the server's own pages (/docs/) keep their slash. The signature
		// still covers the path sent.
		if p := req.URL.Path; req.URL.RawQuery != "" && len(p) > 2 && strings.HasSuffix(p, "/") && strings.Count(p, "/") == 2 {
			req.URL.Path = strings.TrimSuffix(p, "/")
			req.URL.RawPath = ""
		}
		req = req.WithContext(context.WithValue(req.Context(), requestStateKey{}, st))
		c.SetRequest(req)
		return next(c)
	}
}

// authenticateFirst proves who sent a request before a byte of its body is
// read, and before the spec validation runs: kin-openapi reads the whole body
// into memory before it calls a security scheme's AuthenticationFunc, so the
// check cannot wait for it. It verifies the Authorization header, key, scope,
// date and skew, and the signature over the canonical request, which ends
// with the hash X-Cloud-Content-Sha256 declares (sigv4.Verifier.VerifySignature),
// against the host and path the request was sent to. Only a request that
// passes has its body read: refused unread when its Content-Length is over
// the limit, capped at lifecycledoc.MaxBodySize otherwise, and held to the
// declared hash (CheckPayload) and to the digests it declares, Content-MD5
// and the S3 SDKs' checksums (checkDigests). A request that fails has its body dropped
// unread, so nothing after reads it either. The outcome is kept in the
// request's state for authenticate, which the spec validation calls in its
// turn, so a request is still refused in the spec's order (no such
// operation before a failed signature).
func (s *Server) authenticateFirst(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		st := stateFrom(req.Context())
		if st == nil {
			return errors.New("storage: the request has no state: addressing did not run")
		}
		var release func()
		st.authErr = s.verify(req.Context(), req, st, &release)
		if release != nil {
			defer release()
		}
		if st.authErr != nil {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		if req.Body != nil && req.Body != http.NoBody && req.Header.Get("Content-Type") == "" {
			// S3 reads a body sent without a Content-Type as XML, and
			// Python's botocore (boto3, the AWS CLI) sends none on
			// PutBucketLifecycleConfiguration. The header was not signed
			// (it was absent), so setting it changes no signature; a type
			// that was sent is left for the validation to judge (415).
			req.Header.Set("Content-Type", "application/xml")
		}
		return next(c)
	}
}

// authenticate is the spec's security check of the cloud4 scheme: the outcome
// of authenticateFirst. Its errors are *sigv4.Error (each with its
// object-storage code), or MalformedXML for a body over the size limit.
func (s *Server) authenticate(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	st := stateFrom(in.RequestValidationInput.Request.Context())
	if st == nil {
		return errors.New("storage: the request was not authenticated")
	}
	return st.authErr
}

// verify authenticates req, then reads its body and checks its hash (see
// authenticateFirst).
// A signed request with a body takes its share of the document budget
// before the body is read; *release gives it back, once the answer is
// written.
func (s *Server) verify(ctx context.Context, req *http.Request, st *requestState, release *func()) error {
	verified, err := s.verifier.VerifySignature(ctx, sigv4.Request{
		Method: req.Method,
		Host:   st.host,
		Path:   st.path,
		Query:  req.URL.Query(),
		Header: req.Header,
	}, s.now())
	if err != nil {
		return err
	}
	account, err := s.keyAccount(ctx, verified.AccessKeyID)
	if errors.Is(err, storeerr.ErrNotFound) { // deleted since its secret was read
		return &sigv4.Error{Code: sigv4.CodeInvalidAccessKeyID, Status: http.StatusForbidden, Message: "the access key id does not exist"}
	}
	if err != nil {
		return err
	}
	st.account = account
	apiserver.Attribute(ctx, account)
	if req.ContentLength > lifecycledoc.MaxBodySize {
		return lifecycledoc.TooLarge()
	}
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		if *release, err = s.documents.acquire(req); err != nil {
			return err
		}
	}
	body, err := readBody(req)
	if err != nil {
		return err
	}
	if err := s.verifier.CheckPayload(verified, sigv4.HashHex(body)); err != nil {
		return err
	}
	return checkDigests(req.Header, body)
}

// readBody reads the request body, at most lifecycledoc.MaxBodySize bytes
// (whatever limit the server's stack sets), and puts it back for the
// validation and the handler that read it next.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	// A declared length sizes the buffer once (bytes.Buffer reads in steps of
	// bytes.MinRead), rather than io.ReadAll's doubling.
	size := int64(bytes.MinRead)
	if req.ContentLength > 0 {
		size += req.ContentLength
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err := buf.ReadFrom(io.LimitReader(req.Body, lifecycledoc.MaxBodySize+1))
	body := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, lifecycledoc.TooLarge()
		}
		if apiserver.IsTimeout(err) {
			// The caller's body stalled: 408, naming no address.
			return nil, apiserver.ErrBodyTimeout
		}
		return nil, fmt.Errorf("storage: reading the body: %w", err)
	}
	if len(body) > lifecycledoc.MaxBodySize {
		return nil, lifecycledoc.TooLarge()
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}
