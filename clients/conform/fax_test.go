package conform

import (
	"bytes"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/gen/faxapi"
)

func TestInOrder(t *testing.T) {
	tests := []struct {
		seen []faxapi.FaxStatus
		want bool
	}{
		{[]faxapi.FaxStatus{"queued", "media.processed", "originated", "sending", "delivered"}, true},
		{[]faxapi.FaxStatus{"queued", "sending", "delivered"}, true}, // polling may miss states
		{[]faxapi.FaxStatus{"queued", "originated", "failed"}, true}, // a fax fails from any state
		{[]faxapi.FaxStatus{"queued", "failed"}, true},
		{[]faxapi.FaxStatus{"queued", "sending", "originated", "delivered"}, false},
		{[]faxapi.FaxStatus{"delivered", "queued"}, false},
		{[]faxapi.FaxStatus{"queued", "failed", "sending"}, false},
		{[]faxapi.FaxStatus{"queued", "receiving"}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, inOrder(tt.seen, outboundOrder), "%v", tt.seen)
	}
}

func TestEventTypes_KeepsTheFaxsEventsOnceInArrivalOrder(t *testing.T) {
	events := []fax.Event{
		{ID: "1", Type: "fax.queued", FaxID: "a"},
		{ID: "9", Type: "fax.queued", FaxID: "b"},
		{ID: "2", Type: "fax.media.processed", FaxID: "a"},
		{ID: "2", Type: "fax.media.processed", FaxID: "a"}, // redelivered
		{ID: "3", Type: "fax.sending.started", FaxID: "a"},
	}
	assert.Equal(t, []string{"fax.queued", "fax.media.processed", "fax.sending.started"}, eventTypes(events, "a"))
	assert.Empty(t, eventTypes(events, "c"))
}

func TestSamplePDF_HasTheRequestedPages(t *testing.T) {
	for _, pages := range []int{1, samplePages, 5} {
		pdf, err := samplePDF(pages)
		require.NoError(t, err)
		n, err := api.PageCount(bytes.NewReader(pdf), nil)
		require.NoError(t, err, "a PDF document")
		assert.Equal(t, pages, n)
	}
}
