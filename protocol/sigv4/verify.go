package sigv4

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Authorization is a parsed Authorization header.
type Authorization struct {
	// AccessKeyID names the key that signed.
	AccessKeyID string
	// Date is the scope's date, yyyymmdd.
	Date string
	// Region is the scope's region.
	Region string
	// Service is the scope's service.
	Service string
	// Terminator is the scope's last part, such as "cloud4_request".
	Terminator string
	// SignedHeaders are the signed header names, lowercase and sorted.
	SignedHeaders []string
	// Signature is the hex signature.
	Signature string
}

// Scope returns the credential scope "date/region/service/terminator".
func (a Authorization) Scope() string {
	return a.Date + "/" + a.Region + "/" + a.Service + "/" + a.Terminator
}

// ParseAuthorization parses an Authorization header of the scheme strictly: the
// algorithm, a space, then exactly one each of Credential, SignedHeaders and
// Signature (in any order, separated by commas with optional spaces), nothing
// else. The credential has five non-empty parts with a real date; the signed
// headers are lowercase header names, sorted and unique, host among them or not
// (the verifier decides what must be signed); the signature is 64 lowercase hex
// digits.
func (s Scheme) ParseAuthorization(value string) (Authorization, error) {
	var a Authorization
	rest, ok := strings.CutPrefix(value, s.Algorithm()+" ")
	if !ok {
		return a, fmt.Errorf("the authorization does not start with %q", s.Algorithm()+" ")
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(rest, ",") {
		part = strings.TrimLeft(part, " ")
		name, v, ok := strings.Cut(part, "=")
		if !ok || v == "" {
			return a, fmt.Errorf("the component %q is not name=value", part)
		}
		if seen[name] {
			return a, fmt.Errorf("the component %s appears twice", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "Credential":
			err = a.parseCredential(v)
		case "SignedHeaders":
			a.SignedHeaders, err = parseSignedHeaders(v)
		case "Signature":
			if len(v) != 64 || strings.Trim(v, "0123456789abcdef") != "" {
				err = errors.New("the signature is not 64 lowercase hex digits")
			}
			a.Signature = v
		default:
			err = fmt.Errorf("unknown component %q", name)
		}
		if err != nil {
			return Authorization{}, err
		}
	}
	for _, name := range []string{"Credential", "SignedHeaders", "Signature"} {
		if !seen[name] {
			return Authorization{}, fmt.Errorf("the component %s is missing", name)
		}
	}
	return a, nil
}

func (a *Authorization) parseCredential(v string) error {
	parts := strings.Split(v, "/")
	if len(parts) != 5 {
		return errors.New("the credential is not key/date/region/service/terminator")
	}
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t") {
			return errors.New("the credential has an empty or blank part")
		}
	}
	if _, err := time.Parse(DateFormat, parts[1]); err != nil || len(parts[1]) != len(DateFormat) {
		return fmt.Errorf("the credential date %q is not yyyymmdd", parts[1])
	}
	a.AccessKeyID, a.Date, a.Region, a.Service, a.Terminator = parts[0], parts[1], parts[2], parts[3], parts[4]
	return nil
}

func parseSignedHeaders(v string) ([]string, error) {
	names := strings.Split(v, ";")
	for i, n := range names {
		if n == "" {
			return nil, errors.New("an empty signed header name")
		}
		for _, c := range []byte(n) {
			if !isTokenChar(c) || ('A' <= c && c <= 'Z') {
				return nil, fmt.Errorf("the signed header name %q is not a lowercase header name", n)
			}
		}
		if i > 0 && names[i-1] >= n {
			return nil, errors.New("the signed headers are not sorted and unique")
		}
	}
	return names, nil
}

// isTokenChar reports whether c may appear in an HTTP header name (RFC 9110 tchar).
func isTokenChar(c byte) bool {
	return isUnreserved(c) || strings.IndexByte("!#$%&'*+^`|", c) >= 0
}

// String formats the header as AuthorizationHeader does.
func (a Authorization) String(s Scheme) string {
	return s.AuthorizationHeader(a.AccessKeyID, a.Scope(), a.SignedHeaders, a.Signature)
}

// Error codes of verification, as object storage names them.
const (
	CodeAccessDenied                 = "AccessDenied"
	CodeAuthorizationHeaderMalformed = "AuthorizationHeaderMalformed"
	CodeInvalidAccessKeyID           = "InvalidAccessKeyId"
	CodeSignatureDoesNotMatch        = "SignatureDoesNotMatch"
	CodeRequestTimeTooSkewed         = "RequestTimeTooSkewed"
	CodeInvalidArgument              = "InvalidArgument"
)

// Error is a verification failure, carrying the object-storage error code and
// HTTP status to answer with. Its message never holds a secret or a signature.
type Error struct {
	// Code is the error code, such as "SignatureDoesNotMatch".
	Code string
	// Status is the HTTP status that goes with Code.
	Status int
	// Message says what is wrong.
	Message string
}

// Error returns code and message.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

func verifyError(code string, status int, format string, args ...any) *Error {
	return &Error{Code: code, Status: status, Message: fmt.Sprintf(format, args...)}
}

// DefaultMaxSkew is the largest difference between the request time and the
// server's clock that is accepted.
const DefaultMaxSkew = 15 * time.Minute

// SecretFunc returns the secret of an access key; found is false for an unknown
// key. An error means the lookup itself failed.
type SecretFunc func(ctx context.Context, accessKeyID string) (secret string, found bool, err error)

// Verifier checks signed requests for one region and service.
type Verifier struct {
	// Scheme gives the names.
	Scheme Scheme
	// Region is the region requests must be signed for.
	Region string
	// Service is the service requests must be signed for.
	Service string
	// Secret looks up the secret of an access key.
	Secret SecretFunc
	// MaxSkew is the clock skew accepted; 0 means DefaultMaxSkew.
	MaxSkew time.Duration
	// NormalizePath must be what the signers use (false for object storage).
	NormalizePath bool
}

// Verified describes a request whose signature is good.
type Verified struct {
	// AccessKeyID is the key that signed.
	AccessKeyID string
	// Time is the request time.
	Time time.Time
	// PayloadHash is the signed content-SHA-256 header: the hex SHA-256 the
	// body must have (CheckPayload).
	PayloadHash string
}

// Verify checks req's signature at time now, then the body's hash: it is
// VerifySignature followed by CheckPayload. bodyHash is the hex SHA-256 of the
// body actually received. A server that must not read a body before it knows
// who sent it calls the two itself, reading the body in between.
func (v Verifier) Verify(ctx context.Context, req Request, bodyHash string, now time.Time) (Verified, error) {
	verified, err := v.VerifySignature(ctx, req, now)
	if err != nil {
		return Verified{}, err
	}
	if err := v.CheckPayload(verified, bodyHash); err != nil {
		return Verified{}, err
	}
	return verified, nil
}

// CheckPayload checks the hex SHA-256 of the body received against the one
// the request signed (verified.PayloadHash), in constant time: a mismatch is
// the scheme's content-SHA-256 mismatch error (XCloudContentSHA256Mismatch).
func (v Verifier) CheckPayload(verified Verified, bodyHash string) error {
	if !hmac.Equal([]byte(verified.PayloadHash), []byte(bodyHash)) {
		return verifyError(v.Scheme.ContentSHA256MismatchCode(), http.StatusBadRequest,
			"the provided %s does not match what was computed", v.Scheme.ContentSHA256Header())
	}
	return nil
}

// VerifySignature checks req's signature at time now without its body: the
// canonical request ends with the hash the content-SHA-256 header declares,
// so the signature proves the sender before a byte of the body is read;
// CheckPayload then holds the body to that hash. req.PayloadHash is ignored.
// The checks, in order, each with its code: exactly one
// well-formed Authorization header (AccessDenied when absent,
// AuthorizationHeaderMalformed otherwise); the scope's region, service and
// terminator (AuthorizationHeaderMalformed); host, the date header and the
// content-SHA-256 header among the signed headers (AccessDenied); a valid date
// header (AccessDenied) whose day is the scope's (AuthorizationHeaderMalformed),
// within MaxSkew of now (RequestTimeTooSkewed); a hex content hash
// (InvalidArgument); a known key (InvalidAccessKeyId); the signature, compared in
// constant time (SignatureDoesNotMatch). Failures are *Error; a failing secret
// lookup is returned wrapped as it is.
func (v Verifier) VerifySignature(ctx context.Context, req Request, now time.Time) (Verified, error) {
	s := v.Scheme
	values := req.Header.Values("Authorization")
	switch len(values) {
	case 0:
		return Verified{}, verifyError(CodeAccessDenied, http.StatusForbidden, "the request is not signed: no Authorization header")
	case 1:
	default:
		return Verified{}, verifyError(CodeAuthorizationHeaderMalformed, http.StatusBadRequest, "the request has %d Authorization headers", len(values))
	}
	auth, err := s.ParseAuthorization(values[0])
	if err != nil {
		return Verified{}, verifyError(CodeAuthorizationHeaderMalformed, http.StatusBadRequest, "the authorization header is malformed: %v", err)
	}
	switch {
	case auth.Region != v.Region:
		return Verified{}, verifyError(CodeAuthorizationHeaderMalformed, http.StatusBadRequest, "the region '%s' is wrong; expecting '%s'", auth.Region, v.Region)
	case auth.Service != v.Service:
		return Verified{}, verifyError(CodeAuthorizationHeaderMalformed, http.StatusBadRequest, "the service '%s' is wrong; expecting '%s'", auth.Service, v.Service)
	case auth.Terminator != s.Terminator:
		return Verified{}, verifyError(CodeAuthorizationHeaderMalformed, http.StatusBadRequest, "the scope must end with '%s'", s.Terminator)
	}
	for _, required := range []string{"host", strings.ToLower(s.DateHeader()), strings.ToLower(s.ContentSHA256Header())} {
		if !slices.Contains(auth.SignedHeaders, required) {
			return Verified{}, verifyError(CodeAccessDenied, http.StatusForbidden, "the header %s must be signed", required)
		}
	}
	dates := req.Header.Values(s.DateHeader())
	if len(dates) != 1 {
		return Verified{}, verifyError(CodeAccessDenied, http.StatusForbidden, "exactly one %s header is required", s.DateHeader())
	}
	t, err := time.Parse(TimeFormat, dates[0])
	if err != nil {
		return Verified{}, verifyError(CodeAccessDenied, http.StatusForbidden, "the %s header is not %s", s.DateHeader(), TimeFormat)
	}
	if auth.Date != t.Format(DateFormat) {
		return Verified{}, verifyError(CodeAuthorizationHeaderMalformed, http.StatusBadRequest,
			"the credential date %s is not the date of the %s header", auth.Date, s.DateHeader())
	}
	maxSkew := v.MaxSkew
	if maxSkew <= 0 {
		maxSkew = DefaultMaxSkew
	}
	if skew := now.Sub(t); skew > maxSkew || skew < -maxSkew {
		return Verified{}, verifyError(CodeRequestTimeTooSkewed, http.StatusForbidden,
			"the difference between the request time %s and the server time %s is more than %s",
			t.Format(TimeFormat), now.UTC().Format(TimeFormat), maxSkew)
	}
	claimed := req.Header.Values(s.ContentSHA256Header())
	if len(claimed) != 1 || len(claimed[0]) != 64 || strings.Trim(claimed[0], "0123456789abcdef") != "" {
		return Verified{}, verifyError(CodeInvalidArgument, http.StatusBadRequest,
			"the %s header must be the hex SHA-256 of the body", s.ContentSHA256Header())
	}
	secret, found, err := v.Secret(ctx, auth.AccessKeyID)
	if err != nil {
		return Verified{}, fmt.Errorf("sigv4: looking up the access key: %w", err)
	}
	if !found {
		return Verified{}, verifyError(CodeInvalidAccessKeyID, http.StatusForbidden, "the access key id does not exist")
	}
	cr := CanonicalRequest(req.Method, CanonicalURI(req.Path, v.NormalizePath), CanonicalQuery(req.Query),
		CanonicalHeaders(req.Header, req.Host, auth.SignedHeaders), strings.Join(auth.SignedHeaders, ";"), claimed[0])
	want := Signature(s.SigningKey(secret, t, v.Region, v.Service), s.StringToSign(t, auth.Scope(), cr))
	if !hmac.Equal([]byte(want), []byte(auth.Signature)) {
		return Verified{}, verifyError(CodeSignatureDoesNotMatch, http.StatusForbidden,
			"the request signature calculated does not match the signature provided; check the key and the signing method")
	}
	return Verified{AccessKeyID: auth.AccessKeyID, Time: t, PayloadHash: claimed[0]}, nil
}
