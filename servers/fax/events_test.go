package fax

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
)

func TestNewEvent_OccurredAtAlwaysHasSixFractionalDigits(t *testing.T) {
	h := newHarness(t)
	f := faxRow{ID: uuid.NewString(), AccountID: h.acct, ConnectionID: h.app, Direction: "outbound",
		From: h.from, To: "+14155550123", Status: string(faxapi.FaxStatusQueued)}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 10, 47, 34, 0, time.UTC), "2026-11-22T10:47:34.000000Z"},
		{time.Date(2026, 11, 22, 10, 47, 34, 620_000_000, time.UTC), "2026-11-22T10:47:34.620000Z"},
		{time.Date(2026, 11, 22, 10, 47, 34, 622_130_999, time.UTC), "2026-11-22T10:47:34.622130Z"},
		{time.Date(2026, 11, 22, 11, 47, 34, 5_000, time.FixedZone("CET", 3600)), "2026-11-22T10:47:34.000005Z"},
	} {
		ev, err := h.srv.newEvent(f, eventQueued, tc.at)
		require.NoError(t, err)
		var data struct {
			OccurredAt string `json:"occurred_at"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &data), string(ev.Data))
		assert.Equal(t, tc.want, data.OccurredAt)
	}
}
