package fax

import (
	"context"
	"fmt"
	"time"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/cache"
)

// faxAccounts caches the name of the account of a fax (by the fax's id, a
// UUID: a fax never changes account), for the transport of its webhook
// deliveries.
var faxAccounts = cache.New[string](4096, time.Hour)

// withDelivery tells the transport of a webhook delivery of fax faxID which
// attempt it is and whose account the fax is (apiserver.Delivery: a
// sandbox's webhook faults act on its own deliveries only).
func (s *Server) withDelivery(ctx context.Context, faxID string, attempt int) context.Context {
	return apiserver.WithDelivery(ctx, apiserver.Delivery{Attempt: attempt, Set: func(ctx context.Context) (string, error) {
		if name, ok := faxAccounts.Get(faxID); ok {
			return name, nil
		}
		gen := faxAccounts.Generation()
		var name string
		err := s.store.db.QueryRowContext(ctx, `SELECT a.name FROM faxes f JOIN accounts a ON a.id = f.account_id WHERE f.id = ?`, faxID).Scan(&name)
		if err != nil {
			return "", fmt.Errorf("fax %s: its account: %w", faxID, err)
		}
		faxAccounts.Put(gen, faxID, name)
		return name, nil
	}})
}
