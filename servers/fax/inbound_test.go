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
)

func TestInbound_TheDocumentIsLinkedOnlyOnceTheFaxIsReceived(t *testing.T) {
	h, r := newReceivingHarness(t, func(c *Config) { c.StepInterval = time.Hour })
	ctx := context.Background()

	id, err := h.srv.InjectInbound(ctx, InboundFax{From: "+14155550123", To: h.from, Document: makePDF(2), Outcome: InboundReceived})
	require.NoError(t, err)
	r.waitFor(id, "fax.media.processing.started")

	// The PDF is still being generated: fax.received brings its link.
	got, err := h.api.GetFaxWithResponse(ctx, uuid.MustParse(id))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode())
	require.Equal(t, faxapi.FaxStatusMediaProcessing, got.JSON200.Data.Status)
	assert.Nil(t, got.JSON200.Data.MediaUrl, "no link to a PDF that is not ready")
	refreshed, err := h.api.RefreshFaxWithResponse(ctx, uuid.MustParse(id))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnprocessableEntity, refreshed.StatusCode(), "nothing to refresh before the fax is received")

	h.clock.Advance(time.Hour)
	r.waitFor(id, "fax.received")
	got, err = h.api.GetFaxWithResponse(ctx, uuid.MustParse(id))
	require.NoError(t, err)
	require.Equal(t, faxapi.FaxStatusReceived, got.JSON200.Data.Status)
	require.NotNil(t, got.JSON200.Data.MediaUrl)
	refreshed, err = h.api.RefreshFaxWithResponse(ctx, uuid.MustParse(id))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, refreshed.StatusCode())
}
