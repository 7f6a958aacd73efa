package fax

import (
	"context"
	"errors"
	"fmt"

	"github.com/apistack/apistack/servers/internal/telemetry"
)

// receiverStatus is the error of a delivery attempt the receiver answered
// with a status other than 2xx.
type receiverStatus int

func (r receiverStatus) Error() string { return fmt.Sprintf("receiver answered %d", int(r)) }

// countAttempt counts a finished delivery attempt by its outcome; an attempt
// cut short by the server stopping is not counted.
func (s *Server) countAttempt(ctx context.Context, err error) {
	var status receiverStatus
	switch {
	case ctx.Err() != nil:
	case err == nil:
		s.cfg.Telemetry.DeliveryAttempt(telemetry.OutcomeDelivered)
	case errors.As(err, &status):
		s.cfg.Telemetry.DeliveryAttempt(telemetry.OutcomeRefused)
	default:
		s.cfg.Telemetry.DeliveryAttempt(telemetry.OutcomeError)
	}
}

// pendingEventCount counts the outbox's events neither delivered nor
// abandoned (the outbox_pending index holds exactly those).
func (s *store) pendingEventCount(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL AND abandoned_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count pending events: %w", err)
	}
	return n, nil
}
