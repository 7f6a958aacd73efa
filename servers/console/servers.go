package console

import (
	"context"
	"encoding/json"

	"github.com/apistack/apistack/gen/sandboxapi"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/storage"
)

// The console reads each server through its console calls, not through
// the servers' whole surface: each server's Console() (*pam.Console,
// *fax.Console, *storage.Console, *restaurant.Console) satisfies these.

// PAM is what the console reads of the PAM server.
type PAM interface {
	Teams(ctx context.Context) ([]pam.ConsoleTeam, error)
}

// Fax is what the console reads of the fax server, and its redelivery.
type Fax interface {
	Accounts(ctx context.Context) ([]fax.Account, error)
	Faxes(ctx context.Context, accountID string, limit int) ([]fax.ConsoleFax, error)
	Redeliver(ctx context.Context, seq int64) (int64, error)
}

// Storage is what the console reads of the storage server.
type Storage interface {
	Buckets(ctx context.Context) ([]storage.ConsoleBucket, error)
}

// Restaurant is what the console reads of the restaurant server, and its
// imports.
type Restaurant interface {
	Restaurants(ctx context.Context) ([]restaurant.Restaurant, error)
	Clients(ctx context.Context) ([]restaurant.ConsoleClient, error)
	Page(ctx context.Context, restaurantGUID, resource, pageToken string, pageSize int) ([]json.RawMessage, string, error)
	GenerateDemo(ctx context.Context, restaurantGUID string, menuItems int, seed uint64) (restaurant.ImportResult, error)
	Import(ctx context.Context, restaurantGUID string, document []byte) (restaurant.ImportResult, error)
}

// Sandboxes is what the console reads of the sandbox API, and its
// actions on a sandbox: redeliver a webhook, snapshot, fork.
type Sandboxes interface {
	Sandboxes(ctx context.Context) ([]sandbox.ConsoleSandbox, error)
	Sandbox(ctx context.Context, id string) (sandbox.ConsoleSandbox, error)
	Journal(ctx context.Context, id string, f sandbox.JournalFilter) ([]sandboxapi.JournalEntry, error)
	Webhooks(ctx context.Context, id string, limit int) (sandbox.ConsoleWebhooks, error)
	Snapshots(ctx context.Context, id string) ([]sandboxapi.Snapshot, error)
	Redeliver(ctx context.Context, id, eventID string) error
	Snapshot(ctx context.Context, id string) (string, error)
	Fork(ctx context.Context, snapshotID string) (string, error)
}

var (
	_ Sandboxes  = (*sandbox.Console)(nil)
	_ PAM        = (*pam.Console)(nil)
	_ Fax        = (*fax.Console)(nil)
	_ Storage    = (*storage.Console)(nil)
	_ Restaurant = (*restaurant.Console)(nil)
)
