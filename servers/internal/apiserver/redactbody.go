package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/apistack/apistack/servers/internal/redact"
)

// RedactBody returns body with every secret it carries replaced by
// Redacted, judged on the body as a server decodes it, whatever its
// spelling: in a JSON document (a UTF-8 byte order mark before it
// allowed), the value of every field whose name marks a secret
// (secretWords), the name compared after its escapes are decoded and its
// letters folded as case-insensitive decoders fold them (redact.Fold); in a
// form (application/x-www-form-urlencoded, or a query) the value of every
// field whose unescaped name does (redact.SecretParam); in a multipart form
// the same per part. Every string that is a URL has its user info and
// secret-looking query values redacted (redact.URL). A JSON document cut
// short (the journal's cap) is redacted up to the cut.
//
// It runs on the journal's writer, off the requests' path; a body that
// holds none of the bytes a secret could be spelled with (a secret word in
// any ASCII case, an escape, a percent sign, a letter that folds to ASCII,
// a URL's "://" or "@") is returned as it is without being parsed.
func RedactBody(body []byte) []byte {
	if len(body) == 0 || !mayHideSecret(body) {
		return body
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(body, utf8BOM), " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return body
	case trimmed[0] == '{' || trimmed[0] == '[' || trimmed[0] == '"':
		return redactJSON(trimmed)
	case trimmed[0] == '<':
		return body // XML: no API takes a secret in an XML body
	case bytes.HasPrefix(trimmed, []byte("--")):
		if out, ok := redactMultipart(trimmed); ok {
			return out
		}
	}
	if out, changed := redact.Query(string(body)); changed {
		return []byte(out)
	}
	return body
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// mayHideSecret reports whether body holds a byte a secret's name or a URL
// could be spelled with: a secret word in any ASCII case, a JSON escape, a
// percent escape, the first byte of a letter that folds to ASCII or of a
// byte order mark, "://" or "@". Most bodies hold none, and are stored as they are.
func mayHideSecret(body []byte) bool {
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !mayStartSecret[c] {
			continue
		}
		switch c {
		case '\\', '%', '@', 0xC4, 0xC5, 0xE2, 0xEF:
			// 0xC4, 0xC5 and 0xE2 start the only letters that fold to
			// ASCII (İ, ı, ſ, the Kelvin sign); 0xEF a byte order mark.
			return true
		case ':':
			if bytes.HasPrefix(body[i:], []byte("://")) {
				return true
			}
		default:
			m := secretStarts[c]
			for k, w := range secretWords {
				if m&(1<<k) != 0 && len(body)-i >= len(w) && foldEqualsLower(body[i+1:i+len(w)], w[1:]) {
					return true
				}
			}
		}
	}
	return false
}

// mayStartSecret marks the bytes mayHideSecret looks closer at: those that
// start a secret word, and the others it stops at.
var mayStartSecret = func() (t [256]bool) {
	for c := range 256 {
		t[c] = secretStarts[c] != 0
	}
	for _, c := range []byte{'\\', '%', '@', ':', 0xC4, 0xC5, 0xE2, 0xEF} {
		t[c] = true
	}
	return t
}()

// secretField reports whether a JSON field named name holds a secret.
func secretField(name string) bool {
	f := redact.Fold(name)
	return secretName(f) && !isIdentifierField(f)
}

// jsonFrame is an open object or array of redactJSON's walk.
type jsonFrame struct {
	object  bool
	n       int  // members or elements written
	wantKey bool // object: the next token is a key (or its end)
}

// redactJSON writes the JSON values of body again token by token, each
// secret field's value replaced by Redacted and each URL string redacted;
// it stops at the first token that does not decode (a body cut short, or
// not JSON), keeping what came before.
func redactJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	out := make([]byte, 0, len(body))
	var stack []jsonFrame
	top := func() *jsonFrame {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	valueDone := func() {
		if f := top(); f != nil {
			f.n++
			if f.object {
				f.wantKey = true
			}
		}
	}
	values := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			if len(out) == 0 {
				return []byte(Redacted)
			}
			return out
		}
		f := top()
		if f == nil {
			if values > 0 {
				out = append(out, '\n')
			}
			values++
		}
		if f != nil && f.object && f.wantKey {
			if d, ok := tok.(json.Delim); ok { // '}'
				out = append(out, byte(d))
				stack = stack[:len(stack)-1]
				valueDone()
				continue
			}
			key, _ := tok.(string)
			if f.n > 0 {
				out = append(out, ',')
			}
			out = appendJSON(out, key)
			out = append(out, ':')
			f.wantKey = false
			if secretField(key) {
				out = appendJSON(out, Redacted)
				if skipValue(dec) != nil {
					return out
				}
				valueDone()
			}
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == ']' || d == '}') {
			out = append(out, byte(d))
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		if f != nil && !f.object && f.n > 0 {
			out = append(out, ',')
		}
		switch v := tok.(type) {
		case json.Delim:
			out = append(out, byte(v))
			stack = append(stack, jsonFrame{object: v == '{', wantKey: v == '{'})
			continue
		case string:
			out = appendJSON(out, redact.URL(v))
		default:
			out = appendJSON(out, v)
		}
		valueDone()
	}
}

// skipValue reads the next value's tokens, a whole object or array.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// appendJSON appends the token v (a string, json.Number, bool or nil) as
// JSON.
func appendJSON(out []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return appendJSONString(out, x)
	case json.Number:
		return append(out, x...)
	case bool:
		return strconv.AppendBool(out, x)
	}
	return append(out, "null"...)
}

// appendJSONString appends s quoted as a JSON string: '"', '\\' and
// control characters escaped, the rest (valid UTF-8: the decoder made it
// so) as it is.
func appendJSONString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// redactMultipart writes a multipart form again with the boundary of its
// first line, each part's headers as they were and its body redacted: a
// secret-named field's value replaced by Redacted, a text field's URL
// redacted, another part's body (a file) as it was. A form cut short ends
// at its last whole part; false when body is not multipart.
func redactMultipart(body []byte) ([]byte, bool) {
	line, _, ok := bytes.Cut(body, []byte("\n"))
	boundary := strings.TrimSpace(strings.TrimPrefix(string(line), "--"))
	if !ok || boundary == "" || len(boundary) > 70 {
		return nil, false
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	var out bytes.Buffer
	w := multipart.NewWriter(&out)
	if w.SetBoundary(boundary) != nil {
		return nil, false
	}
	parts := 0
	for {
		p, err := r.NextRawPart()
		if err != nil {
			break
		}
		data, err := io.ReadAll(p)
		if err != nil {
			break
		}
		name := p.FormName()
		switch {
		case secretField(name) || redact.SecretParam(name):
			data = []byte(Redacted)
		case p.FileName() == "":
			data = []byte(redact.URL(string(data)))
		}
		pw, err := w.CreatePart(textproto.MIMEHeader(p.Header))
		if err != nil {
			break
		}
		_, _ = pw.Write(data)
		parts++
	}
	if parts == 0 {
		return []byte(Redacted), true
	}
	_ = w.Close()
	return out.Bytes(), true
}

// RedactQuery returns the raw query q with the value of each
// secret-looking parameter replaced (redact.Query): a journal shows a
// request's query as it shows its body.
func RedactQuery(q string) string {
	if q == "" || !strings.ContainsRune(q, '%') && !strings.Contains(q, "://") && !hasSecretWord(q) && !redactedParams(q) {
		return q
	}
	out, _ := redact.Query(q)
	return out
}

// redactedParams reports whether q may name a parameter redact.SecretParam
// knows beyond secretWords (sig, auth, pass, …): the cheap test is to ask it.
func redactedParams(q string) bool {
	for _, pair := range strings.Split(q, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if redact.SecretParam(name) {
			return true
		}
	}
	return false
}
