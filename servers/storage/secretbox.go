package storage

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

// Access-key secrets cannot be stored as hashes: verifying a request signature
// means recomputing its HMAC with the secret itself. So they are sealed with
// AES-256-GCM under a master key that lives outside the database (a file of
// its own in the data directory), bound to their key id: a copy of the
// database alone reveals no secret, and a sealed secret moved to another key's
// row does not open.

// MasterKeySize is the size of the key that seals access-key secrets.
const MasterKeySize = 32

const sealedPrefix = "v1:"

// secretBox seals and opens access-key secrets.
type secretBox struct {
	aead cipher.AEAD
}

func newSecretBox(masterKey []byte) (*secretBox, error) {
	if len(masterKey) != MasterKeySize {
		return nil, fmt.Errorf("storage: the master key has %d bytes, want %d", len(masterKey), MasterKeySize)
	}
	block, err := aes.NewCipher(masterKey)
	if err != nil {
		return nil, fmt.Errorf("storage: master key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("storage: master key: %w", err)
	}
	return &secretBox{aead: aead}, nil
}

// seal encrypts secret for the key keyID.
func (b *secretBox) seal(keyID, secret string) string {
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	sealed := b.aead.Seal(nonce, nonce, []byte(secret), []byte(keyID))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(sealed)
}

// open decrypts what seal returned for keyID.
func (b *secretBox) open(keyID, stored string) (string, error) {
	enc, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return "", errors.New("storage: the stored secret is not sealed")
	}
	raw, err := base64.RawStdEncoding.DecodeString(enc)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", errors.New("storage: the stored secret is damaged")
	}
	n := b.aead.NonceSize()
	secret, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(keyID))
	if err != nil {
		return "", fmt.Errorf("storage: the stored secret does not open with this master key: %w", err)
	}
	return string(secret), nil
}

// LoadOrCreateMasterKey reads the master key at path, creating it (random,
// readable by its owner only) when there is none yet.
func LoadOrCreateMasterKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err == nil {
		if len(key) != MasterKeySize {
			return nil, fmt.Errorf("storage: master key %s has %d bytes, want %d", path, len(key), MasterKeySize)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("storage: read master key: %w", err)
	}
	key = make([]byte, MasterKeySize)
	_, _ = rand.Read(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("storage: create master key: %w", err)
	}
	// O_EXCL: when two processes start at once, one key wins and the other
	// reads it.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadOrCreateMasterKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: create master key: %w", err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		return nil, fmt.Errorf("storage: write master key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("storage: write master key: %w", err)
	}
	return key, f.Close()
}
