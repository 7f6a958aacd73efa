package stack

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/fax"
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

func TestBootstrapFaxDemo_MovesOnlyDemoWebhookURLsToTheInbox(t *testing.T) {
	tests := []struct {
		name, was, want string
	}{
		{"the old port-9 URL", oldDemoFaxWebhookURL, "http://127.0.0.1:8089/fax/webhook_inbox"},
		{"an inbox on an earlier admin port", "http://127.0.0.1:9999/fax/webhook_inbox", "http://127.0.0.1:8089/fax/webhook_inbox"},
		{"a URL the user set", "https://hooks.example.com/fax", "https://hooks.example.com/fax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			db, err := fax.OpenDB(ctx, dir+"/fax.db")
			require.NoError(t, err)
			defer db.Close()
			key, err := fax.LoadOrCreateMasterKey(dir + "/fax-master.key")
			require.NoError(t, err)
			s, err := fax.New(ctx, fax.Config{DB: db, MasterKey: key})
			require.NoError(t, err)
			first, err := bootstrapFaxDemo(ctx, s, nil, "http://127.0.0.1:8089"+FaxInboxPath)
			require.NoError(t, err)
			acct, err := s.AccountByName(ctx, demoFaxAccount)
			require.NoError(t, err)
			require.NoError(t, s.SetApplicationWebhookURL(ctx, acct.ID, first.ConnectionID, tt.was))

			again, err := bootstrapFaxDemo(ctx, s, first, "http://127.0.0.1:8089"+FaxInboxPath)
			require.NoError(t, err)
			require.Equal(t, first.ConnectionID, again.ConnectionID)
			app, err := s.ApplicationOf(ctx, acct.ID, again.ConnectionID)
			require.NoError(t, err)
			assert.Equal(t, tt.want, app.WebhookURL)
		})
	}
}
