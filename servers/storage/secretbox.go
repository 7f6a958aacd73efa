package storage

import (
	"github.com/apistack/apistack/servers/internal/secretbox"
)

// Access-key secrets cannot be stored as hashes: verifying a request signature
// means recomputing its HMAC with the secret itself. So they are sealed
// (servers/internal/secretbox) under a master key that lives outside the
// database, bound to their key id.

// MasterKeySize is the size of the key that seals access-key secrets.
const MasterKeySize = secretbox.KeySize

// LoadOrCreateMasterKey reads the master key at path, creating it (random,
// readable by its owner only) when there is none yet.
func LoadOrCreateMasterKey(path string) ([]byte, error) {
	return secretbox.LoadOrCreateKey(path)
}
