package fax

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
)

// A send reads its application from a cache; changing the application's
// webhook URL is seen by the very next send, and so is deleting it.
func TestSend_AnApplicationChangedAfterUseIsReadAfresh(t *testing.T) {
	h := newHarness(t)
	first, second := newReceiver(t, h), newReceiver(t, h)
	h.useReceivers(first.url, "")
	a := h.send("+14155550123")
	first.waitFor(a, "fax.delivered")

	h.useReceivers(second.url, "")
	b := h.send("+14155550123")
	second.waitFor(b, "fax.delivered")
	assert.Empty(t, first.eventsOf(b), "the old URL gets nothing of a fax sent after the change")

	del, err := h.api.DeleteFaxApplicationWithResponse(context.Background(), h.app)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, del.StatusCode(), string(del.Body))
	resp, err := h.api.SendFaxWithResponse(context.Background(), faxapi.SendFaxJSONRequestBody{
		ConnectionId: h.app, To: "+14155550123", From: h.from, MediaUrl: h.docs.URL + "/3-pages.pdf",
	})
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode(), string(resp.Body))
}

// Pages of the list are kept until the next write: a fax sent, or moved on
// by the simulator, is seen by the next list.
func TestListFaxes_EveryWriteIsSeenByTheNextList(t *testing.T) {
	h, r := newReceivingHarness(t)
	statuses := func() []faxapi.FaxStatus {
		resp, err := h.api.ListFaxesWithResponse(context.Background(), &faxapi.ListFaxesParams{})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
		var out []faxapi.FaxStatus
		for _, f := range resp.JSON200.Data {
			out = append(out, f.Status)
		}
		return out
	}
	assert.Empty(t, statuses())
	assert.Empty(t, statuses(), "read again from the cache")
	id := h.send("+14155550123")
	assert.Len(t, statuses(), 1, "the send is seen")
	r.waitFor(id, "fax.delivered")
	assert.Equal(t, []faxapi.FaxStatus{faxapi.FaxStatusDelivered}, statuses(), "so is every step of the simulator")
}
