package fax

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/descriptor"
)

func TestSeedTenants_MovesOnlyDemoWebhookURLsToTheInbox(t *testing.T) {
	tests := []struct {
		name, was, want string
	}{
		{"the old port-9 URL", oldDemoWebhookURL, "http://127.0.0.1:8089/fax/webhook_inbox"},
		{"an inbox on an earlier admin port", "http://127.0.0.1:9999/fax/webhook_inbox", "http://127.0.0.1:8089/fax/webhook_inbox"},
		{"a URL the user set", "https://hooks.example.com/fax", "https://hooks.example.com/fax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			set := descriptor.TenantSet{Name: descriptor.DemoSet, URLs: map[string]string{"admin": "http://127.0.0.1:8089"}}
			dir := t.TempDir()
			db, err := OpenDB(ctx, dir+"/fax.db")
			require.NoError(t, err)
			defer db.Close()
			key, err := LoadOrCreateMasterKey(dir + "/fax-master.key")
			require.NoError(t, err)
			s, err := New(ctx, Config{Deps: Deps{DB: db}, MasterKey: key})
			require.NoError(t, err)
			first, err := seedTenants(ctx, s, set, nil)
			require.NoError(t, err)
			acct, err := s.Operator().AccountByName(ctx, descriptor.DemoSet)
			require.NoError(t, err)
			require.NoError(t, s.Operator().setApplicationWebhookURL(ctx, acct.ID, first.ConnectionID, tt.was)) // as an earlier version stored it

			again, err := seedTenants(ctx, s, set, first)
			require.NoError(t, err)
			require.Equal(t, first.ConnectionID, again.ConnectionID)
			app, err := s.Operator().ApplicationOf(ctx, acct.ID, again.ConnectionID)
			require.NoError(t, err)
			assert.Equal(t, tt.want, app.WebhookURL)
		})
	}
}
