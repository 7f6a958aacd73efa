package sigv4

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Request is the part of an HTTP request that is signed.
type Request struct {
	// Method is the HTTP method.
	Method string
	// Host is the Host header's value (net/http's Request.Host).
	Host string
	// Path is the decoded path (net/url's URL.Path).
	Path string
	// Query is the query string's parameters.
	Query url.Values
	// Header holds the headers; Host is taken from Host, not from here.
	Header http.Header
	// PayloadHash is the hex SHA-256 of the body (EmptyPayloadHash for none).
	PayloadHash string
}

// Credentials are a key pair, with the token of temporary credentials.
type Credentials struct {
	// AccessKeyID names the key.
	AccessKeyID string
	// SecretAccessKey is the secret; it never leaves the signer.
	SecretAccessKey string
	// SessionToken is set for temporary credentials only.
	SessionToken string
}

// Options tune signing.
type Options struct {
	// NormalizePath removes dot and empty segments from the path before signing;
	// object storage signs the path as it is, so the storage API leaves it false.
	NormalizePath bool
	// SignPayloadHash adds the content-SHA-256 header (X-Cloud-Content-Sha256)
	// carrying PayloadHash and signs it; the storage API requires it.
	SignPayloadHash bool
	// OmitSessionToken signs without the session token and adds it afterwards, for
	// services that expect it unsigned.
	OmitSessionToken bool
}

// Signed is the outcome of signing: the headers to set on the request, and the
// intermediate values, which tests compare with the suite.
type Signed struct {
	// Header holds the headers to add to the request: the date, the payload hash
	// and the session token when used, and Authorization.
	Header http.Header
	// CanonicalRequest is the canonical request that was signed.
	CanonicalRequest string
	// StringToSign is the string that was signed.
	StringToSign string
	// Signature is the hex signature.
	Signature string
}

// SignHeaders signs req with the credentials at time t for region and service,
// putting the signature in the Authorization header. req is not modified.
func (s Scheme) SignHeaders(req Request, c Credentials, region, service string, t time.Time, o Options) Signed {
	header := req.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	added := http.Header{}
	set := func(name, value string) {
		header.Set(name, value)
		added.Set(name, value)
	}
	set(s.DateHeader(), t.UTC().Format(TimeFormat))
	if o.SignPayloadHash {
		set(s.ContentSHA256Header(), req.PayloadHash)
	}
	if c.SessionToken != "" && !o.OmitSessionToken {
		set(s.SecurityTokenHeader(), c.SessionToken)
	}
	signed := HeadersToSign(header)
	scope := s.Scope(t, region, service)
	cr := CanonicalRequest(req.Method, CanonicalURI(req.Path, o.NormalizePath), CanonicalQuery(req.Query),
		CanonicalHeaders(header, req.Host, signed), strings.Join(signed, ";"), req.PayloadHash)
	sts := s.StringToSign(t, scope, cr)
	sig := Signature(s.SigningKey(c.SecretAccessKey, t, region, service), sts)
	if c.SessionToken != "" && o.OmitSessionToken {
		added.Set(s.SecurityTokenHeader(), c.SessionToken)
	}
	added.Set("Authorization", s.AuthorizationHeader(c.AccessKeyID, scope, signed, sig))
	return Signed{Header: added, CanonicalRequest: cr, StringToSign: sts, Signature: sig}
}

// Presigned is the outcome of presigning: the query parameters to add to the
// request, and the intermediate values.
type Presigned struct {
	// Query holds the parameters to add, the signature included.
	Query url.Values
	// CanonicalRequest is the canonical request that was signed.
	CanonicalRequest string
	// StringToSign is the string that was signed.
	StringToSign string
	// Signature is the hex signature.
	Signature string
}

// Presign signs req in its query string, valid for expires from t: the algorithm,
// credential, date, expiry and signed headers become query parameters, signed
// with the rest of the query, and the signature is added last. Only headers are
// signed, never a date header.
func (s Scheme) Presign(req Request, c Credentials, region, service string, t time.Time, expires time.Duration, o Options) Presigned {
	scope := s.Scope(t, region, service)
	signed := HeadersToSign(req.Header)
	added := url.Values{}
	added.Set(s.QueryParam("Algorithm"), s.Algorithm())
	added.Set(s.QueryParam("Credential"), c.AccessKeyID+"/"+scope)
	added.Set(s.QueryParam("Date"), t.UTC().Format(TimeFormat))
	added.Set(s.QueryParam("Expires"), strconv.FormatInt(int64(expires/time.Second), 10))
	added.Set(s.QueryParam("SignedHeaders"), strings.Join(signed, ";"))
	if c.SessionToken != "" && !o.OmitSessionToken {
		added.Set(s.QueryParam("Security-Token"), c.SessionToken)
	}
	query := url.Values{}
	for k, vs := range req.Query {
		query[k] = append([]string(nil), vs...)
	}
	for k, vs := range added {
		query[k] = append(query[k], vs...)
	}
	cr := CanonicalRequest(req.Method, CanonicalURI(req.Path, o.NormalizePath), CanonicalQuery(query),
		CanonicalHeaders(req.Header, req.Host, signed), strings.Join(signed, ";"), req.PayloadHash)
	sts := s.StringToSign(t, scope, cr)
	sig := Signature(s.SigningKey(c.SecretAccessKey, t, region, service), sts)
	if c.SessionToken != "" && o.OmitSessionToken {
		added.Set(s.QueryParam("Security-Token"), c.SessionToken)
	}
	added.Set(s.QueryParam("Signature"), sig)
	return Presigned{Query: added, CanonicalRequest: cr, StringToSign: sts, Signature: sig}
}

// SignRequest signs req in place with the credentials at time t for region
// and service, its body's SHA-256 being payloadHash (EmptyPayloadHash for
// none): it signs req's method, host (req.Host, else its URL's), path, query
// and headers as SignHeaders does, sets the headers SignHeaders adds on req,
// and returns SignHeaders' outcome.
func (s Scheme) SignRequest(req *http.Request, payloadHash string, c Credentials, region, service string, t time.Time, o Options) Signed {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	signed := s.SignHeaders(Request{
		Method: req.Method, Host: host, Path: req.URL.Path, Query: req.URL.Query(),
		Header: req.Header, PayloadHash: payloadHash,
	}, c, region, service, t, o)
	for k, v := range signed.Header {
		req.Header[k] = v
	}
	return signed
}
