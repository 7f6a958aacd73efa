package admin_test

import (
	"testing"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/internal/contractsweep"
)

// adminBodyLimits are the admin API's body limits as its spec states them:
// 32 MiB for a configuration import, 70 MiB for an inbound fax, 1 MiB for
// every other operation.
func adminBodyLimit(operationID string) int64 {
	switch operationID {
	case "ImportRestaurantConfiguration":
		return 32 << 20
	case "InjectFaxInbound":
		return 70 << 20
	}
	return 1 << 20
}

func TestEveryOperation_WithABodyOverTheLimitAnswers413(t *testing.T) {
	a := startFullAdmin(t)
	contractsweep.TooLarge(t, contract.Admin, a.url, unknown, "Bearer "+adminToken, adminBodyLimit)
}
