// Package redact hides the secrets a URL carries before it is shown or
// stored for show (a webhook log, a request journal, a delivery's
// meta.delivered_to): the user info (user:password) and the values of the
// query parameters whose names look like secrets (token, sig, key, …).
// What is left still says where the URL points.
package redact

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Placeholder replaces a redacted user info and each redacted query value.
const Placeholder = "redacted"

// URL returns raw with its user info replaced by Placeholder and the value
// of each secret-looking query parameter (SecretParam) replaced by
// Placeholder, the other parameters as they were; the fragment is dropped.
// A string that is not an absolute URL with a host is returned as it is;
// one that does not parse at all is withheld whole.
func URL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	if u.Host == "" && u.User == nil {
		return raw
	}
	changed := false
	if u.User != nil {
		u.User, changed = url.User(Placeholder), true
	}
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment, changed = "", "", true
	}
	if q, ok := Query(u.RawQuery); ok {
		u.RawQuery, changed = q, true
	}
	if !changed {
		return raw
	}
	return u.String()
}

// Query returns the raw query (or form body) q with the value of each
// secret-looking parameter replaced by Placeholder and each value that is a
// URL redacted (URL), and whether anything changed. The parameters keep
// their order and spelling; a name that does not unescape is redacted as a
// secret's.
func Query(q string) (string, bool) {
	if q == "" {
		return q, false
	}
	var b strings.Builder
	changed := false
	for i, pair := range strings.Split(q, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		rawName, rawValue, hasValue := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		switch {
		case hasValue && (err != nil || SecretParam(name)):
			if rawValue != Placeholder {
				changed = true
			}
			b.WriteString(rawName + "=" + Placeholder)
			continue
		case hasValue:
			if v, err := url.QueryUnescape(rawValue); err == nil && strings.Contains(v, "://") {
				if r := URL(v); r != v {
					b.WriteString(rawName + "=" + url.QueryEscape(r))
					changed = true
					continue
				}
			}
		}
		b.WriteString(pair)
	}
	if !changed {
		return q, false
	}
	return b.String(), true
}

// secretParts mark a parameter's name as a secret's when its folded name
// (Fold) holds one of them.
var secretParts = []string{"secret", "token", "key", "password", "passwd", "pwd", "pass", "sig", "auth", "cred", "session", "cookie"}

// identifiers are names holding a secret part that name no secret.
var identifiers = map[string]bool{
	"key_id": true, "keyid": true, "access_key_id": true, "pagetoken": true, "page_token": true,
	"token_type": true, "tokentype": true, "keys": true,
}

// SecretParam reports whether a query parameter or form field named name
// likely holds a secret, whatever the case or Unicode spelling of its
// letters (Fold).
func SecretParam(name string) bool {
	f := Fold(name)
	if identifiers[f] {
		return false
	}
	if f == "code" {
		return true
	}
	for _, p := range secretParts {
		if strings.Contains(f, p) {
			return true
		}
	}
	return false
}

// Fold is name in lower case, each letter folded the way case-insensitive
// decoders match field names (encoding/json folds a rune r as
// ToUpper(ToLower(r))): "ſ" (long s) folds to "s" and "K" (the Kelvin sign) to
// "k", so a name spelled with them is judged as the name a server reads.
func Fold(name string) string {
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(name)
	}
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(unicode.ToLower(r))) }, name)
}
