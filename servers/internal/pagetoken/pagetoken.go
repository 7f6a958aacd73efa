// Package pagetoken makes the opaque, tamper-evident page cursors the list
// operations hand out (PAM's `offset`, the restaurant API's `pageToken`).
//
// A token is the base64url JSON of a keyset position plus an HMAC-SHA256 over
// that JSON and a scope (the list, the tenant and the filters it was issued
// for). A token that was edited, forged, or issued for another list or tenant
// fails to decode, so a cursor can never widen what a caller sees.
package pagetoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// encoding is unpadded base64url, decoded strictly: the unused bits of the
// last character must be zero, so each token has exactly one spelling and an
// edited character never decodes to the same bytes.
var encoding = base64.RawURLEncoding.Strict()

// ErrInvalid is returned for a token this server did not issue for the scope.
var ErrInvalid = errors.New("page token was not issued for this list")

// macSize is the number of HMAC bytes kept in a token; 128 bits is plenty
// against forgery and keeps tokens short.
const macSize = 16

// Codec encodes and decodes tokens with one secret key.
type Codec struct {
	key []byte
}

// New returns a Codec keyed with key (at least 32 random bytes, kept across
// restarts so tokens stay valid).
func New(key []byte) (*Codec, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("pagetoken: key has %d bytes, want at least 32", len(key))
	}
	return &Codec{key: append([]byte(nil), key...)}, nil
}

// Encode returns the token for position, bound to scope.
func (c *Codec) Encode(scope string, position any) (string, error) {
	payload, err := json.Marshal(position)
	if err != nil {
		return "", fmt.Errorf("pagetoken: encode: %w", err)
	}
	return encoding.EncodeToString(payload) + "." + encoding.EncodeToString(c.mac(scope, payload)), nil
}

// Decode checks token against scope and decodes its position into position.
// Every failure wraps ErrInvalid.
func (c *Codec) Decode(scope, token string, position any) error {
	p, m, ok := strings.Cut(token, ".")
	if !ok {
		return ErrInvalid
	}
	payload, err := encoding.DecodeString(p)
	if err != nil {
		return ErrInvalid
	}
	mac, err := encoding.DecodeString(m)
	if err != nil || !hmac.Equal(mac, c.mac(scope, payload)) {
		return ErrInvalid
	}
	if err := json.Unmarshal(payload, position); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

func (c *Codec) mac(scope string, payload []byte) []byte {
	h := hmac.New(sha256.New, c.key)
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write(payload)
	return h.Sum(nil)[:macSize]
}
