package restaurant_test

import (
	"testing"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/internal/contractsweep"
)

func TestEveryOperation_WithABodyOverTheLimitAnswers413(t *testing.T) {
	f := newFixture(t)
	contractsweep.TooLarge(t, contract.Restaurant, f.url, nil, "Bearer "+f.token, func(string) int64 { return 16 << 10 })
}
