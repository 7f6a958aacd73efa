package admin_test

import (
	"net/http"
	"testing"

	"github.com/apistack/apistack/internal/contractsweep"
	"github.com/apistack/apistack/protocol/contract"
)

// TestEveryOperation_WithABodyOfAnotherTypeAnswers415 sends every
// operation that takes a body, with the admin token, a body of a type none
// of them takes: each is answered 415 unsupported_content_type, held to the
// spec.
func TestEveryOperation_WithABodyOfAnotherTypeAnswers415(t *testing.T) {
	a := startFullAdmin(t)
	contractsweep.Status(t, http.StatusUnsupportedMediaType, contractsweep.Sweep{
		API: contract.Admin, BaseURL: a.url, Values: unknown, Authorization: "Bearer " + adminToken,
		ContentType: "text/plain",
	})
}
