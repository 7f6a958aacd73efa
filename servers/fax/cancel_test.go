package fax

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
)

func TestCancel_RacingTheSimulatorStillCancelsAFaxInProgress(t *testing.T) {
	// Steps back to back: the simulator moves each fax on (queued ->
	// media.processed -> originated -> sending) while it is being cancelled.
	h, _ := newReceivingHarness(t)
	ctx := context.Background()

	for range 15 {
		sent, err := h.api.SendFaxWithResponse(ctx, faxapi.SendFaxJSONRequestBody{
			ConnectionId: h.app, To: "+13125550820", From: h.from, MediaUrl: h.docs.URL + "/3-pages.pdf",
		})
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, sent.StatusCode(), string(sent.Body))
		id := sent.JSON202.Data.Id
		cancelled, err := h.api.CancelFaxWithResponse(ctx, id)
		require.NoError(t, err)
		if cancelled.StatusCode() == http.StatusOK {
			assert.Equal(t, faxapi.FaxFailureReasonUserCancelled, *cancelled.JSON200.Data.FailureReason)
			continue
		}
		// Only a fax that is no longer in progress may refuse the cancel.
		require.Equal(t, http.StatusUnprocessableEntity, cancelled.StatusCode(), string(cancelled.Body))
		got, err := h.api.GetFaxWithResponse(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, faxapi.FaxStatusDelivered, got.JSON200.Data.Status,
			"cancel refused a fax in progress: %s", cancelled.Body)
	}
}
