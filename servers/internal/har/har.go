// Package har reads and writes HTTP Archive (HAR) 1.2 files, the format
// recorded traffic is kept in so that browsers, mitmproxy, WireMock and
// apistack read and write the same files.
//
// A Writer appends each entry to the file as it completes, so the file on
// disk is at every moment a complete HAR but for its last two closing
// brackets, which Close writes: a recorder killed outright leaves a file
// whose entries, all but one cut short at most, Read still returns
// (Log.Truncated says the end was missing). Two custom fields carry what
// the spec check found: _operation (the operationId) and _violations.
//
// Secrets are redacted as the sandbox journal redacts them
// (servers/internal/apiserver): secret headers, JSON fields and URL query
// parameters whose names mark a secret, and the password of a URL's user
// information.
package har

import (
	"encoding/base64"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apistack/apistack/servers/internal/apiserver"
)

// Version is the HAR version written and read.
const Version = "1.2"

// Log is a HAR document's log object.
type Log struct {
	Version string   `json:"version"`
	Creator Creator  `json:"creator"`
	Browser *Creator `json:"browser,omitempty"`
	Comment string   `json:"comment,omitempty"`
	// BodyCap is, in a recording of apistack's, the most bytes of one body
	// the recording keeps (custom field _bodyCap).
	BodyCap int64   `json:"_bodyCap,omitempty"`
	Entries []Entry `json:"entries"`
	// Truncated reports, on a Log that Read returned, that the file ended
	// before its entries array did (its recorder was killed): the entries
	// are those complete.
	Truncated bool `json:"-"`
}

// Creator names the application that made the file.
type Creator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Comment string `json:"comment,omitempty"`
}

// Entry is one exchange.
type Entry struct {
	StartedDateTime string   `json:"startedDateTime"`
	Time            float64  `json:"time"`
	Request         Request  `json:"request"`
	Response        Response `json:"response"`
	Cache           struct{} `json:"cache"`
	Timings         Timings  `json:"timings"`
	ServerIPAddress string   `json:"serverIPAddress,omitempty"`
	Comment         string   `json:"comment,omitempty"`
	// Operation is the operationId of the spec's operation the request is
	// (custom field _operation; absent when none is).
	Operation string `json:"_operation,omitempty"`
	// Violations are the exchange's departures from the spec (custom field
	// _violations; absent when it keeps to it).
	Violations []Violation `json:"_violations,omitempty"`
	// Error says why no answer came (custom field _error; the response's
	// status is then 0).
	Error string `json:"_error,omitempty"`
}

// Violation is one departure from the spec.
type Violation struct {
	// Where is "request" or "response".
	Where string `json:"where"`
	// Pointer is a JSON pointer into the exchange: /status, /header/<name>,
	// /query/<name>, /path/<name>, /body/<pointer into the body>, /security
	// (no security requirement met), or "" for
	// the exchange as a whole (no operation has its method and path).
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Request is an entry's request.
type Request struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []Cookie    `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	QueryString []NameValue `json:"queryString"`
	PostData    *PostData   `json:"postData,omitempty"`
	HeadersSize int64       `json:"headersSize"`
	BodySize    int64       `json:"bodySize"`
}

// Response is an entry's response.
type Response struct {
	Status      int         `json:"status"`
	StatusText  string      `json:"statusText"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []Cookie    `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	Content     Content     `json:"content"`
	RedirectURL string      `json:"redirectURL"`
	HeadersSize int64       `json:"headersSize"`
	BodySize    int64       `json:"bodySize"`
}

// Cookie is a cookie of a request or response (apistack records none: the
// Cookie and Set-Cookie headers are secrets).
type Cookie struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// NameValue is a header or a query parameter.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// PostData is a request's body.
type PostData struct {
	MimeType string      `json:"mimeType"`
	Params   []NameValue `json:"params,omitempty"`
	Text     string      `json:"text"`
	Comment  string      `json:"comment,omitempty"`
	// Encoding is "base64" for a body that is not UTF-8 text (custom field
	// _encoding: HAR 1.2 has none for request bodies).
	Encoding string `json:"_encoding,omitempty"`
	// Truncated reports a body cut at the recording's cap (_truncated).
	Truncated bool `json:"_truncated,omitempty"`
}

// Content is a response's body.
type Content struct {
	// Size is the length of the whole body, decoded.
	Size        int64  `json:"size"`
	Compression int64  `json:"compression,omitempty"`
	MimeType    string `json:"mimeType"`
	Text        string `json:"text,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	Comment     string `json:"comment,omitempty"`
	// Truncated reports a body cut at the recording's cap (_truncated).
	Truncated bool `json:"_truncated,omitempty"`
}

// Timings are an entry's phases in milliseconds (-1: not applicable).
type Timings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
}

// Redacted is what replaces a secret's value.
const Redacted = apiserver.Redacted

// Headers lists h in HAR form, names sorted, secret values redacted (as
// the sandbox journal redacts them).
func Headers(h http.Header) []NameValue {
	// Redacted as listed, not by a redacted copy of h first: the proxy
	// lists two header sets of every exchange it records.
	n := 0
	var stack [32]string
	names := stack[:0]
	for name, values := range h {
		names = append(names, name)
		n += len(values)
	}
	slices.Sort(names)
	out := make([]NameValue, 0, n)
	for _, name := range names {
		if apiserver.SecretHeader(name) {
			// One value stands for them all, as in the journal.
			out = append(out, NameValue{Name: name, Value: Redacted})
			continue
		}
		for _, v := range h[name] {
			out = append(out, NameValue{Name: name, Value: v})
		}
	}
	return out
}

// RedactURL returns u with the password of its user information and the
// value of every query parameter whose name marks a secret (a signature, a
// token, a key) redacted.
func RedactURL(u *url.URL) *url.URL {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), Redacted)
		}
	}
	if c.RawQuery != "" {
		q := c.Query()
		changed := false
		for name, values := range q {
			if apiserver.SecretHeader(name) {
				for i := range values {
					values[i] = Redacted
				}
				changed = true
			}
		}
		if changed {
			c.RawQuery = encodeQuery(c.RawQuery, q)
		}
	}
	return &c
}

// encodeQuery re-encodes q keeping raw's order of parameters.
func encodeQuery(raw string, q url.Values) string {
	var b strings.Builder
	seen := map[string]int{}
	for p := range queryParts(raw) {
		values := q[p.name]
		i := seen[p.name]
		seen[p.name]++
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.rawName)
		if i < len(values) {
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(values[i]))
		}
	}
	return b.String()
}

// QueryString lists u's query parameters in order.
func QueryString(u *url.URL) []NameValue {
	out := []NameValue{}
	for p := range queryParts(u.RawQuery) {
		out = append(out, NameValue{Name: p.name, Value: queryUnescape(p.rawValue)})
	}
	return out
}

// queryPart is one parameter of a raw query: its name as written and
// unescaped, and its value as written.
type queryPart struct{ rawName, name, rawValue string }

// queryParts yields raw's parameters in order, leaving out empty ones.
func queryParts(raw string) iter.Seq[queryPart] {
	return func(yield func(queryPart) bool) {
		for _, part := range strings.Split(raw, "&") {
			if part == "" {
				continue
			}
			k, v, _ := strings.Cut(part, "=")
			if !yield(queryPart{rawName: k, name: queryUnescape(k), rawValue: v}) {
				return
			}
		}
	}
}

// queryUnescape is s unescaped as a query component, or s itself where it
// does not unescape.
func queryUnescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// RedactBody is a body with its secret JSON fields redacted, as the
// sandbox journal redacts them.
func RedactBody(body []byte) []byte { return apiserver.RedactBody(body) }

// BodyText is body as HAR text: itself when it is UTF-8, else base64 (the
// encoding returned is then "base64").
func BodyText(body []byte) (text, encoding string) {
	if utf8.Valid(body) {
		return string(body), ""
	}
	return base64.StdEncoding.EncodeToString(body), "base64"
}

// DecodeText is the body a HAR text holds in encoding ("" or "base64").
func DecodeText(text, encoding string) ([]byte, error) {
	if encoding == "base64" {
		return base64.StdEncoding.DecodeString(text)
	}
	return []byte(text), nil
}

// Body is the request body an entry recorded (nil when none).
func (r *Request) Body() ([]byte, error) {
	if r.PostData == nil {
		return nil, nil
	}
	if r.PostData.Text == "" && len(r.PostData.Params) > 0 {
		v := url.Values{}
		for _, p := range r.PostData.Params {
			v.Add(p.Name, p.Value)
		}
		return []byte(v.Encode()), nil
	}
	return DecodeText(r.PostData.Text, r.PostData.Encoding)
}

// Body is the response body an entry recorded.
func (r *Response) Body() ([]byte, error) { return DecodeText(r.Content.Text, r.Content.Encoding) }

// Header is the entry's request headers as an http.Header.
func (r *Request) Header() http.Header { return toHeader(r.Headers) }

// Header is the entry's response headers as an http.Header.
func (r *Response) Header() http.Header { return toHeader(r.Headers) }

func toHeader(list []NameValue) http.Header {
	h := http.Header{}
	for _, nv := range list {
		// HTTP/2 recorders (browsers) keep pseudo-headers: not headers.
		if strings.HasPrefix(nv.Name, ":") {
			continue
		}
		h.Add(nv.Name, nv.Value)
	}
	return h
}

// Millis is d in HAR's milliseconds.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// DateTime is t as HAR's startedDateTime (ISO 8601, to the microsecond so
// that exchanges sent one after the other sort in the order they were sent).
func DateTime(t time.Time) string { return t.Format("2006-01-02T15:04:05.000000Z07:00") }

// Started is when the entry's request started (the zero time when its
// startedDateTime does not parse).
func (e *Entry) Started() time.Time {
	t, err := time.Parse(time.RFC3339Nano, e.StartedDateTime)
	if err != nil {
		return time.Time{}
	}
	return t
}
