package stack

import (
	"crypto/rand"

	"github.com/apistack/apistack/servers/internal/secretbox"
)

// NewAdminToken returns a fresh random admin token.
func NewAdminToken() string { return "adm_" + rand.Text() }

func randomKey() []byte {
	k := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}
