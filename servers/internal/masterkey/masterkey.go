// Package masterkey reads the stack's master key, the one secret every
// replica sharing a database is given (--master-key-file or
// APISTACK_MASTER_KEY: the base64 of 32 random bytes, made with
// `head -c32 /dev/urandom | base64`), and derives from it each API's own key
// with HKDF-SHA256, so a replica's sealed secrets open on every other.
package masterkey

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Size is the size of the master key and of every key derived from it.
const Size = 32

// HowToMake tells an operator how to make a master key.
const HowToMake = "make one with `head -c32 /dev/urandom | base64` and give every replica the same (--master-key-file FILE or APISTACK_MASTER_KEY)"

// Key is a master key.
type Key struct {
	raw []byte
}

// Parse reads a key from its base64 text (standard or URL alphabet, padded
// or not; surrounding white space ignored).
func Parse(text string) (Key, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Key{}, errors.New("master key: empty; " + HowToMake)
	}
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(text); err == nil {
			break
		}
	}
	if err != nil {
		return Key{}, fmt.Errorf("master key: not base64: %w; %s", err, HowToMake)
	}
	if len(raw) != Size {
		return Key{}, fmt.Errorf("master key: %d bytes, want %d; %s", len(raw), Size, HowToMake)
	}
	return Key{raw: raw}, nil
}

// ReadFile reads a key from the file at path (its base64 text).
func ReadFile(path string) (Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("master key: %w", err)
	}
	k, err := Parse(string(data))
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// IsZero reports whether k is the zero Key (none given).
func (k Key) IsZero() bool { return len(k.raw) == 0 }

// Derive returns the key of one API (info is its name: "fax", "storage",
// "admin"): HKDF-SHA256 of the master key, no salt, Size bytes. Two APIs
// never share a key, and every replica derives the same.
func (k Key) Derive(info string) ([]byte, error) {
	if k.IsZero() {
		return nil, errors.New("master key: none given")
	}
	key, err := hkdf.Key(sha256.New, k.raw, nil, info, Size)
	if err != nil {
		return nil, fmt.Errorf("master key: derive %s: %w", info, err)
	}
	return key, nil
}
