package sandbox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/testkit"
)

func TestTriggers_InboundFaxArrivesWithItsEvents(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	b := e.create(t, frozenClock)
	e.receive(t, b)
	resp, err := b.api.TriggerInboundFaxWithResponse(ctx, b.Id, sandboxapi.InboundFaxRequest{Pages: ptr(3)})
	testkit.Answered(t, http.StatusCreated, resp, err)
	in := resp.JSON201
	assert.Equal(t, b.Credentials.Fax.From, in.To, "the sandbox's number by default")
	assert.Equal(t, "+14155550123", in.From)
	assert.Equal(t, 3, in.PageCount)
	id := in.FaxId.String()

	f, err := b.fax.GetFax(ctx, id)
	require.NoError(t, err, "the sandbox's own key sees the fax")
	assert.Equal(t, faxapi.FaxDirectionInbound, faxapi.FaxDirection(f.Direction))
	events := e.inboxUntil(t, b, id, "fax.received")
	assert.Equal(t, []string{"fax.receiving.started", "fax.media.processing.started", "fax.received"}, types(events))
	f, err = b.fax.GetFax(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, faxapi.FaxStatusReceived, faxapi.FaxStatus(f.Status))

	// Another sandbox's key does not see it; a failed call is a failed fax.
	other := e.create(t, sandboxapi.CreateSandboxRequest{})
	_, err = other.fax.GetFax(ctx, id)
	assert.Equal(t, http.StatusNotFound, statusOf(err))
	failed := triggerInbound(t, b, sandboxapi.InboundFaxRequest{From: ptr("+13125550199"),
		Outcome: ptr(sandboxapi.InboundFaxRequestOutcomeFailed)})
	assert.Contains(t, types(e.inboxUntil(t, b, failed, "fax.failed")), "fax.failed")

	// Bad triggers answer 400 and make no fax: another sandbox's number,
	// a document that is no PDF, a document and pages together.
	for _, body := range []string{
		`{"to":"` + other.Credentials.Fax.From + `"}`,
		`{"document":"` + "bm90IGEgcGRm" + `"}`,
		`{"document":"` + "bm90IGEgcGRm" + `","pages":2}`,
		`{"pages":0}`,
		`{"from":"12345"}`,
	} {
		r, err := b.api.TriggerInboundFaxWithBodyWithResponse(ctx, b.Id, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, r.StatusCode(), "%s: %s", body, r.Body)
	}
	n := 0
	for _, err := range b.fax.ListFaxes(ctx, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 2, n, "only the two good triggers made faxes")
	// Another sandbox's token cannot trigger into b.
	r, err := other.api.TriggerInboundFaxWithResponse(ctx, b.Id, sandboxapi.InboundFaxRequest{})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, r.StatusCode())
}
