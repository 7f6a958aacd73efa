package pam_test

import (
	"testing"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/internal/contractsweep"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func TestEveryOperation_WithABodyOverTheLimitAnswers413(t *testing.T) {
	env, token := adminToken(t, pamtest.Options{})
	contractsweep.TooLarge(t, contract.PAM, env.URL, map[string]string{"team_name": "acme"}, "Bearer "+token,
		func(string) int64 { return 64 << 10 })
}
