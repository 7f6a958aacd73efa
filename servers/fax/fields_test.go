package fax

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// A fax sent with store_media keeps its document once the media is
// processed: cancelling it answers the failed fax with the link to that
// document and the reason user_cancelled.
func TestCancel_AFaxWithStoredMediaAnswersItsLink(t *testing.T) {
	// Steps a minute apart: the fax waits in media.processed until it is
	// cancelled.
	h, r := newReceivingHarness(t, func(c *Config) { c.StepInterval = time.Minute })
	ctx := context.Background()

	id := h.sendDoc("+13125550800", h.docs.URL+"/3-pages.pdf", true)
	r.waitFor(id, "fax.media.processed")
	resp, err := h.api.CancelFaxWithResponse(ctx, uuid.MustParse(id))
	testkit.Answered(t, http.StatusOK, resp, err)
	assert.Equal(t, faxapi.FaxStatusFailed, resp.JSON200.Data.Status)
	assert.Equal(t, faxapi.FaxFailureReasonUserCancelled, *resp.JSON200.Data.FailureReason)
	require.NotNil(t, resp.JSON200.Data.StoredMediaUrl, "the stored document is linked: %s", resp.Body)

	link, err := http.Get(*resp.JSON200.Data.StoredMediaUrl)
	require.NoError(t, err)
	defer link.Body.Close()
	assert.Equal(t, http.StatusOK, link.StatusCode, "the link serves the document")
}

// A failed fax whose document was stored can still be refreshed: the answer
// carries the failure reason beside a fresh link.
func TestRefresh_AFailedFaxAnswersItsFailureReason(t *testing.T) {
	h, r := newReceivingHarness(t)
	ctx := context.Background()

	// +1 312 555 0801 fails while originating, with user_busy.
	id := h.sendDoc("+13125550801", h.docs.URL+"/3-pages.pdf", true)
	r.waitFor(id, "fax.failed")
	resp, err := h.api.RefreshFaxWithResponse(ctx, uuid.MustParse(id))
	testkit.Answered(t, http.StatusOK, resp, err)
	assert.Equal(t, faxapi.FaxStatusFailed, resp.JSON200.Data.Status)
	require.NotNil(t, resp.JSON200.Data.FailureReason, "%s", resp.Body)
	assert.Equal(t, faxapi.FaxFailureReasonUserBusy, *resp.JSON200.Data.FailureReason)
	assert.NotNil(t, resp.JSON200.Data.StoredMediaUrl, "refresh links the stored document")
}

// An inbound fax received in part is listed as such: the list of inbound
// faxes carries partial_content.
func TestListFaxes_AnInboundFaxReceivedInPartSaysSo(t *testing.T) {
	h, r := newReceivingHarness(t)
	ctx := context.Background()

	id, err := h.srv.Operator().InjectInbound(ctx, InboundFax{From: "+14155550123", To: h.from, Document: makePDF(2), Outcome: InboundPartial})
	require.NoError(t, err)
	r.waitFor(id, "fax.received")
	inbound := faxapi.FaxDirectionInbound
	resp, err := h.api.ListFaxesWithResponse(ctx, &faxapi.ListFaxesParams{FilterDirection: &inbound})
	testkit.Answered(t, http.StatusOK, resp, err)
	require.Len(t, resp.JSON200.Data, 1)
	got := resp.JSON200.Data[0]
	assert.Equal(t, id, got.Id.String())
	assert.Equal(t, faxapi.FaxStatusReceived, got.Status)
	require.NotNil(t, got.PartialContent, "%s", resp.Body)
	assert.True(t, *got.PartialContent)
}
