// Package linkheader parses and formats HTTP Link header fields (RFC 8288).
//
// The PAM client follows rel="next" pagination links and the PAM server emits
// them. The common Go parsers split a header on every comma, which corrupts
// target URIs whose query strings carry commas (?fields=id,name), so this
// parser tracks the <...> and quoted-string context and only treats a comma
// as a separator where RFC 9110 list syntax makes it one.
package linkheader

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Link is one link-value of a Link header.
//
// Rels is a slice because one link may carry several relation types
// (rel="next last"); they are lower-cased because relation types compare
// case-insensitively, so callers can use == without folding. Params holds the
// remaining target attributes under lower-cased names for the same reason;
// rel never appears in Params so there is a single source of truth for
// relations. Params is nil when the link has no other attributes.
type Link struct {
	// URI is the target exactly as written between < and >. It is not
	// resolved against the request URI because only the caller knows the base.
	URI string
	// Rels are the relation types of the first rel parameter.
	Rels []string
	// Params maps each other parameter to its first value, unquoted; a
	// parameter written without a value (; crossorigin) maps to "".
	Params map[string]string
}

// ErrSyntax is wrapped by every parse error so callers can tell a malformed
// header from other failures with errors.Is without matching messages.
var ErrSyntax = errors.New("malformed Link header")

// SyntaxError locates a parse failure, because a bare "malformed" is useless
// when debugging a server that emits several long Link headers.
type SyntaxError struct {
	// Header is the index of the offending value among Parse's arguments.
	Header int
	// Offset is the byte offset within that value where parsing failed.
	Offset int
	// Msg says what was expected there.
	Msg string
}

// Error reports the position first so that logs of long headers stay
// readable.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("linkheader: header %d, offset %d: %s", e.Header, e.Offset, e.Msg)
}

// Unwrap exposes ErrSyntax so errors.Is works through the positional detail.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Parse takes every Link header value of a response, since a server may split
// its links across several fields, and returns the links in order. It
// rejects input it cannot parse unambiguously instead of guessing, because a
// guessed pagination URI silently skips or repeats pages. When a parameter
// repeats within a link-value the first occurrence wins, as RFC 8288 section
// 3.3 requires for rel.
func Parse(headers ...string) ([]Link, error) {
	var links []Link
	for h, v := range headers {
		p := parser{s: v, header: h}
		var err error
		if links, err = p.list(links); err != nil {
			return nil, err
		}
	}
	return links, nil
}

// Find returns the first link carrying rel, compared case-insensitively so
// it also works on hand-built links whose Rels were not lower-cased.
func Find(links []Link, rel string) (Link, bool) {
	for _, l := range links {
		for _, r := range l.Rels {
			if strings.EqualFold(r, rel) {
				return l, true
			}
		}
	}
	return Link{}, false
}

// Format renders links as one Link header value that Parse reads back to the
// same links. rel is always quoted, as in the RFC's examples, because some
// clients only recognise the quoted form; other values are quoted only when
// they are not tokens. Params are written in name order so output is
// deterministic for tests and caches. A '>' in a URI is percent-encoded
// because it would end the target early; it cannot occur in a valid
// URI-reference anyway. Params whose names are not tokens, or named rel, are
// omitted because they cannot be represented (rel comes from Rels). Values
// with control characters cannot appear in a header at all and are not
// guaranteed to round-trip.
func Format(links ...Link) string {
	var b strings.Builder
	for i, l := range links {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('<')
		b.WriteString(strings.ReplaceAll(l.URI, ">", "%3E"))
		b.WriteByte('>')
		if len(l.Rels) > 0 {
			b.WriteString("; rel=")
			writeQuoted(&b, strings.Join(l.Rels, " "))
		}
		for _, k := range slices.Sorted(maps.Keys(l.Params)) {
			if !isToken(k) || strings.EqualFold(k, "rel") {
				continue
			}
			b.WriteString("; ")
			b.WriteString(k)
			v := l.Params[k]
			switch {
			case v == "":
				// Written bare: Parse maps both ; k and ; k="" to "".
			case isToken(v):
				b.WriteByte('=')
				b.WriteString(v)
			default:
				b.WriteByte('=')
				writeQuoted(&b, v)
			}
		}
	}
	return b.String()
}

func writeQuoted(b *strings.Builder, v string) {
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
}

// parser walks one header value byte by byte; the grammar is ASCII-based, so
// bytes outside it (obs-text, UTF-8 in URIs) are passed through untouched.
type parser struct {
	s      string
	i      int
	header int
}

func (p *parser) fail(offset int, format string, args ...any) error {
	return &SyntaxError{Header: p.header, Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// found describes the current byte for error messages.
func (p *parser) found() string {
	if p.i >= len(p.s) {
		return "end of input"
	}
	return fmt.Sprintf("%q", p.s[p.i])
}

func (p *parser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// list parses #link-value, appending to links.
func (p *parser) list(links []Link) ([]Link, error) {
	for {
		// RFC 9110 section 5.6.1: empty list elements must be ignored.
		for p.skipOWS(); p.i < len(p.s) && p.s[p.i] == ','; p.skipOWS() {
			p.i++
		}
		if p.i >= len(p.s) {
			return links, nil
		}
		l, err := p.linkValue()
		if err != nil {
			return nil, err
		}
		links = append(links, l)
		p.skipOWS()
		if p.i < len(p.s) && p.s[p.i] != ',' {
			return nil, p.fail(p.i, "unexpected %s after link-value, want ',' or ';'", p.found())
		}
	}
}

// linkValue parses "<" URI-Reference ">" *( OWS ";" OWS link-param ).
func (p *parser) linkValue() (Link, error) {
	if p.s[p.i] != '<' {
		return Link{}, p.fail(p.i, "expected '<' to start a link-value, found %s", p.found())
	}
	start := p.i
	p.i++
	n := strings.IndexByte(p.s[p.i:], '>')
	if n < 0 {
		return Link{}, p.fail(start, "unterminated URI: no '>' closes this '<'")
	}
	link := Link{URI: p.s[p.i : p.i+n]}
	for j := 0; j < n; j++ {
		if c := link.URI[j]; c < 0x20 || c == 0x7f {
			return Link{}, p.fail(p.i+j, "control character %q in URI", c)
		}
	}
	p.i += n + 1

	relSeen := false
	for {
		p.skipOWS()
		if p.i >= len(p.s) || p.s[p.i] != ';' {
			return link, nil
		}
		p.i++
		p.skipOWS()
		nameAt := p.i
		name := p.token()
		if name == "" {
			return Link{}, p.fail(nameAt, "expected parameter name after ';', found %s", p.found())
		}
		name = lowerASCII(name)
		value := ""
		p.skipOWS() // BWS before '='
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			p.skipOWS()
			var err error
			if value, err = p.paramValue(name); err != nil {
				return Link{}, err
			}
		}
		if name == "rel" {
			if !relSeen {
				relSeen = true
				link.Rels = splitRels(value)
			}
			continue
		}
		if _, dup := link.Params[name]; dup {
			continue
		}
		if link.Params == nil {
			link.Params = make(map[string]string)
		}
		link.Params[name] = value
	}
}

func (p *parser) paramValue(name string) (string, error) {
	if p.i < len(p.s) && p.s[p.i] == '"' {
		return p.quoted()
	}
	at := p.i
	v := p.token()
	if v == "" {
		return "", p.fail(at, "expected token or quoted-string value for parameter %q, found %s", name, p.found())
	}
	return v, nil
}

// token consumes 1*tchar and returns it, or "" when none is present.
func (p *parser) token() string {
	start := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted consumes an RFC 9110 quoted-string and returns its unescaped
// content. Control characters are rejected rather than copied so that every
// value Parse returns can be written back by Format.
func (p *parser) quoted() (string, error) {
	start := p.i
	p.i++ // opening '"'
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.fail(start, "unterminated quoted-string")
			}
			if e := p.s[p.i+1]; !isText(e) {
				return "", p.fail(p.i+1, "invalid escaped character %q in quoted-string", e)
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case isText(c):
			b.WriteByte(c)
			p.i++
		default:
			return "", p.fail(p.i, "control character %q in quoted-string", c)
		}
	}
	return "", p.fail(start, "unterminated quoted-string")
}

// splitRels splits on the SP separators of RFC 8288's relation-types;
// HTAB is accepted too since it is harmless and some servers emit it.
func splitRels(v string) []string {
	rels := strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(rels) == 0 {
		return nil
	}
	for i, r := range rels {
		rels[i] = lowerASCII(r)
	}
	return rels
}

// lowerASCII folds only ASCII letters: names and registered relation types
// are ASCII, and leaving other bytes alone keeps invalid UTF-8 intact so
// values survive a Format/Parse round trip byte for byte.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// isText reports whether c may appear in a quoted-string, either as qdtext
// or escaped (HTAB / SP / VCHAR / obs-text); '"' and '\\' are handled by the
// caller.
func isText(c byte) bool {
	return c == '\t' || (c >= 0x20 && c != 0x7f)
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return false
		}
	}
	return true
}
