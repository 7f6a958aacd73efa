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
