// Package sigv4 is the request-signing protocol of the storage API as small pure
// functions: canonical request, string to sign, signing key and signature, each a
// function of plain values (request parts, credentials, time) in the shape of
// aws-sdk-go-v2's aws/signer/v4. Nothing here reads the clock, the network or a
// request body: the caller passes the time and the payload hash.
//
// The storage API's CLOUD4-HMAC-SHA256 is Signature Version 4 with other names, so
// the names are parameters (Scheme): Cloud4 signs for apistack, AWS4 reproduces the
// published SigV4 test suite byte for byte (testdata/sigv4).
//
// The package is the one place shared by the client's signer (clients/storage) and
// the server's verifier (servers/storage): servers never import clients otherwise,
// but both sides must compute the very same bytes, so they share these functions.
package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Scheme holds the names that tell one SigV4-style scheme from another.
type Scheme struct {
	// AlgorithmPrefix starts the algorithm name and the key chain: "CLOUD4" or "AWS4".
	AlgorithmPrefix string
	// HeaderPrefix starts the scheme's headers and query parameters: "X-Cloud-" or "X-Amz-".
	HeaderPrefix string
	// Terminator ends the credential scope: "cloud4_request" or "aws4_request".
	Terminator string
}

var (
	// Cloud4 is the storage API's scheme: CLOUD4-HMAC-SHA256, X-Cloud-*, cloud4_request.
	Cloud4 = Scheme{AlgorithmPrefix: "CLOUD4", HeaderPrefix: "X-Cloud-", Terminator: "cloud4_request"}
	// AWS4 is Signature Version 4 with its original names, the names of the test suite.
	AWS4 = Scheme{AlgorithmPrefix: "AWS4", HeaderPrefix: "X-Amz-", Terminator: "aws4_request"}
)

// Formats of the request time.
const (
	// TimeFormat is the format of the date header and of the string to sign.
	TimeFormat = "20060102T150405Z"
	// DateFormat is the format of the date in the credential scope.
	DateFormat = "20060102"
)

// EmptyPayloadHash is the hex SHA-256 of an empty body.
const EmptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Algorithm is the algorithm name, such as "CLOUD4-HMAC-SHA256".
func (s Scheme) Algorithm() string { return s.AlgorithmPrefix + "-HMAC-SHA256" }

// DateHeader is the name of the request-time header, such as "X-Cloud-Date".
func (s Scheme) DateHeader() string { return s.HeaderPrefix + "Date" }

// ContentSHA256Header is the name of the payload-hash header, such as "X-Cloud-Content-Sha256".
func (s Scheme) ContentSHA256Header() string { return s.HeaderPrefix + "Content-Sha256" }

// SecurityTokenHeader is the name of the session-token header, such as "X-Cloud-Security-Token".
func (s Scheme) SecurityTokenHeader() string { return s.HeaderPrefix + "Security-Token" }

// QueryParam is the name of a presigning query parameter, such as "X-Cloud-Signature" for "Signature".
func (s Scheme) QueryParam(name string) string { return s.HeaderPrefix + name }

// ContentSHA256MismatchCode is the error code of a body whose hash is not the one
// signed, such as "XCloudContentSHA256Mismatch".
func (s Scheme) ContentSHA256MismatchCode() string {
	return strings.ReplaceAll(s.HeaderPrefix, "-", "") + "ContentSHA256Mismatch"
}

// HashHex returns the lowercase hex SHA-256 of b, the form of every hash in the protocol.
func HashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// URIEncode percent-encodes every byte of s but the unreserved characters
// (A-Z a-z 0-9 - . _ ~), in uppercase hex; '/' is kept when keepSlash is set.
func URIEncode(s string, keepSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || (keepSlash && c == '/') {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// CanonicalURI returns the canonical form of a request's path, given decoded (as
// net/url's URL.Path): URI-encoded once, slashes kept. With normalize, dot segments
// are removed and empty segments dropped first, as every service but object storage
// does; object storage signs the path as it is (normalize false).
func CanonicalURI(path string, normalize bool) string {
	if normalize {
		path = normalizePath(path)
	}
	if path == "" {
		path = "/"
	}
	return URIEncode(path, true)
}

// normalizePath removes "." and ".." segments (RFC 3986, 5.2.4) and empty segments,
// keeping a trailing slash.
func normalizePath(path string) string {
	segments := strings.Split(path, "/")
	var out []string
	for _, seg := range segments {
		switch seg {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
		}
	}
	last := segments[len(segments)-1]
	trailing := last == "" || last == "." || last == ".."
	if len(out) == 0 {
		return "/"
	}
	p := "/" + strings.Join(out, "/")
	if trailing {
		p += "/"
	}
	return p
}

// CanonicalQuery returns the canonical query string: every name and value
// URI-encoded (slashes too), sorted by name then value, joined with '&'.
func CanonicalQuery(query url.Values) string {
	type pair struct{ k, v string }
	var pairs []pair
	for k, vs := range query {
		ek := URIEncode(k, false)
		for _, v := range vs {
			pairs = append(pairs, pair{ek, URIEncode(v, false)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// ignoredHeaders are never signed: they are the signature itself, or are changed
// by proxies and HTTP libraries on the way.
var ignoredHeaders = []string{"authorization", "user-agent", "expect", "transfer-encoding", "x-amzn-trace-id"}

// HeadersToSign returns the lowercase names of the headers a signer signs: host
// and every header of h but the ignored ones (Authorization, User-Agent, Expect,
// Transfer-Encoding), sorted.
func HeadersToSign(h http.Header) []string {
	names := []string{"host"}
	for k := range h {
		lk := strings.ToLower(k)
		if lk == "host" || slices.Contains(ignoredHeaders, lk) {
			continue
		}
		if !slices.Contains(names, lk) {
			names = append(names, lk)
		}
	}
	slices.Sort(names)
	return names
}

// CanonicalHeaders returns the canonical headers block for the signed header
// names (lowercase, sorted): one "name:value\n" line each, where value is the
// header's values trimmed, with inner runs of whitespace (line folds included)
// collapsed to one space, joined with ','. host is the request's host, which
// net/http keeps out of the header map.
func CanonicalHeaders(h http.Header, host string, signed []string) string {
	lower := make(map[string][]string, len(h))
	for k, vs := range h {
		lk := strings.ToLower(k)
		lower[lk] = append(lower[lk], vs...)
	}
	var b strings.Builder
	for _, name := range signed {
		b.WriteString(name)
		b.WriteByte(':')
		if name == "host" {
			b.WriteString(trimAll(host))
		} else {
			for i, v := range lower[name] {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(trimAll(v))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func trimAll(v string) string {
	return strings.Join(strings.FieldsFunc(v, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r'
	}), " ")
}

// CanonicalRequest joins the parts of the canonical request. canonicalHeaders is
// CanonicalHeaders's block and signedHeaders the names joined with ';'.
func CanonicalRequest(method, canonicalURI, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash string) string {
	return strings.Join([]string{method, canonicalURI, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash}, "\n")
}

// Scope returns the credential scope "yyyymmdd/region/service/terminator".
func (s Scheme) Scope(t time.Time, region, service string) string {
	return t.UTC().Format(DateFormat) + "/" + region + "/" + service + "/" + s.Terminator
}

// StringToSign returns algorithm, request time, scope and the hash of the
// canonical request, one per line.
func (s Scheme) StringToSign(t time.Time, scope, canonicalRequest string) string {
	return s.Algorithm() + "\n" + t.UTC().Format(TimeFormat) + "\n" + scope + "\n" + HashHex([]byte(canonicalRequest))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// SigningKey derives the key of one day, region and service from the secret:
// HMAC chained over date, region, service and terminator, starting from
// AlgorithmPrefix+secret.
func (s Scheme) SigningKey(secret string, t time.Time, region, service string) []byte {
	k := hmacSHA256([]byte(s.AlgorithmPrefix+secret), t.UTC().Format(DateFormat))
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, s.Terminator)
}

// Signature returns the lowercase hex HMAC-SHA256 of the string to sign.
func Signature(signingKey []byte, stringToSign string) string {
	return hex.EncodeToString(hmacSHA256(signingKey, stringToSign))
}

// AuthorizationHeader formats the Authorization header value.
func (s Scheme) AuthorizationHeader(accessKeyID, scope string, signedHeaders []string, signature string) string {
	return s.Algorithm() + " Credential=" + accessKeyID + "/" + scope +
		", SignedHeaders=" + strings.Join(signedHeaders, ";") + ", Signature=" + signature
}
