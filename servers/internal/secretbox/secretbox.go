// Package secretbox seals the secrets a server must be able to read back
// (signing keys, access-key secrets that sign requests), so its database
// alone reveals none of them: each value is encrypted with AES-256-GCM under
// a key kept outside the database, in a file of its own in the data
// directory, and bound to a label (the row it belongs to), so a sealed value
// copied to another row does not open.
//
// Secrets a server only compares (API keys, tokens) are hashed instead; this
// package is for the ones it cannot hash.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the size of the key that seals secrets.
const KeySize = 32

const sealedPrefix = "v1:"

// Box seals and opens secrets with one key.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box sealing with key (KeySize bytes).
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secretbox: the key has %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts secret, bound to label.
func (b *Box) Seal(label string, secret []byte) string {
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	sealed := b.aead.Seal(nonce, nonce, secret, []byte(label))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(sealed)
}

// IsSealed reports whether stored looks like the output of Seal (and not a
// value written before sealing was introduced).
func IsSealed(stored string) bool { return strings.HasPrefix(stored, sealedPrefix) }

// Open decrypts what Seal returned for label.
func (b *Box) Open(label, stored string) ([]byte, error) {
	enc, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return nil, errors.New("secretbox: the stored secret is not sealed")
	}
	raw, err := base64.RawStdEncoding.Strict().DecodeString(enc)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return nil, errors.New("secretbox: the stored secret is damaged")
	}
	n := b.aead.NonceSize()
	secret, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(label))
	if err != nil {
		return nil, fmt.Errorf("secretbox: the stored secret does not open with this key: %w", err)
	}
	return secret, nil
}

// LoadOrCreateKey reads the key at path, creating it (random, readable by its
// owner only) when there is none yet.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err == nil {
		if len(key) != KeySize {
			return nil, fmt.Errorf("secretbox: key %s has %d bytes, want %d", path, len(key), KeySize)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("secretbox: read key: %w", err)
	}
	key = make([]byte, KeySize)
	_, _ = rand.Read(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("secretbox: create key: %w", err)
	}
	// O_EXCL: when two processes start at once, one key wins and the other
	// reads it.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadOrCreateKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("secretbox: create key: %w", err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		return nil, fmt.Errorf("secretbox: write key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("secretbox: write key: %w", err)
	}
	return key, f.Close()
}
