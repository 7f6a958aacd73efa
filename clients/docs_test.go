package clients_test

import (
	"testing"

	"github.com/apistack/apistack/internal/docblocks"
)

// The clients guide's module: a new module whose program calls the PAM
// client tidies offline and builds.
func TestDocs_ClientsModule(t *testing.T) {
	docblocks.RunModule(t, "docs/clients.md", "clients-module")
}
