package stack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaxInbox_KeepsTheLastEvents(t *testing.T) {
	in := &FaxInbox{}
	for i := range FaxInboxEvents + 5 {
		in.Add(InboxEvent{Attempt: i})
	}
	got := in.List()
	require.Len(t, got, FaxInboxEvents)
	assert.Equal(t, 5, got[0].Attempt, "the oldest are dropped")
	assert.Equal(t, FaxInboxEvents+4, got[len(got)-1].Attempt)
}
