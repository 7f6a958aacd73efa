package admin_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/internal/contractsweep"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func TestEveryOperation_WithoutTheAdminTokenAnswers401(t *testing.T) {
	env := pamtest.Start(t, pamtest.Options{})
	// Two wrong tokens an operation: more than a source may send before
	// it is refused 429 (TestEveryOperation_FromASourceOfTooManyWrongTokensAnswers429).
	url := serveAdmin(t, checked(t, admin.Config{PAM: env.Operator, Logger: slog.New(slog.DiscardHandler), WrongTokenBurst: 1000}))
	for _, auth := range []string{"", "Bearer wrong-token"} {
		contractsweep.Status(t, http.StatusUnauthorized, contractsweep.Sweep{
			API: contract.Admin, BaseURL: url, Authorization: auth, Keep: contractsweep.Secured(true),
		})
	}
}
